#!/usr/bin/env bash
# Makes the TensorFlow C runtime available to cgo: writes
# build/pkgconfig/tensorflow.pc, which tfbridge (`#cgo pkg-config: tensorflow`)
# and everything importing it compile and link against.
#
# Which TensorFlow:
#   - default: the tensorflow-cpu wheel that `scripts/setup-python.sh main`
#     installs into .venv (its libtensorflow_cc.so.2, libtensorflow_framework.so.2
#     and include/);
#   - STRUCTTENSOR_TF_DIR=DIR: your own build, either a libtensorflow tree
#     (DIR/lib/libtensorflow{,_cc}.so.2 + DIR/include/tensorflow/c/c_api.h) or a
#     wheel's tensorflow/ directory. Nothing is installed then.
#   - STRUCTTENSOR_TF_VENV=DIR: the tensorflow-cpu wheel (the version pinned
#     in python/requirements.txt) installed into a virtualenv at DIR, for a
#     program outside this repository (the module cache is read-only). It is
#     reused while the pin is unchanged.
#
# For a Go module of your own that imports this one (README, "Using the
# library from your own module"):
#   st=$(go list -m -f '{{.Dir}}' github.com/structtensor/structtensor-go)
#   STRUCTTENSOR_TF_VENV=~/.cache/structtensor/tf bash "$st/scripts/setup-tf.sh" ~/.cache/structtensor/pkgconfig
#   export PKG_CONFIG_PATH=~/.cache/structtensor/pkgconfig
#
# Binaries get an rpath to the library directory, so they run without
# LD_LIBRARY_PATH. Go programs do not depend on the libraries: package
# internal/tfruntime defines every C API function and loads the runtime
# with dlopen (through that rpath) on first use, so the libraries are
# listed --as-needed (and after libstdc++, whose symbols libtensorflow
# also exports): a shared object built from C or C++ (make ops-lib)
# still links them. Idempotent: the virtualenv is reused while its
# requirements are unchanged and the .pc file is rewritten only when its
# content changes (so cgo build caches stay valid).
# Usage: scripts/setup-tf.sh [OUT_DIR]   (default build/pkgconfig; prints
# the .pc path on success)
set -euo pipefail
out_dir=${1:-}
if [ -n "$out_dir" ]; then
  mkdir -p "$out_dir"
  out_dir=$(cd "$out_dir" && pwd)
fi
cd "$(dirname "$0")/.."
root=$PWD
out_dir=${out_dir:-$root/build/pkgconfig}
out=$out_dir/tensorflow.pc

die() { echo "setup-tf: $*" >&2; exit 1; }

# find_layout DIR: sets libdir, incdir, corelib if DIR holds a usable runtime.
find_layout() {
  local d=$1 cand
  libdir="" incdir="" corelib=""
  for cand in "$d/lib" "$d/lib64" "$d"; do
    if [ -e "$cand/libtensorflow_cc.so.2" ]; then corelib=libtensorflow_cc.so.2
    elif [ -e "$cand/libtensorflow.so.2" ]; then corelib=libtensorflow.so.2
    else continue
    fi
    [ -e "$cand/libtensorflow_framework.so.2" ] || continue
    libdir=$cand
    break
  done
  [ -n "$libdir" ] || return 1
  for cand in "$d/include" "$libdir/include"; do
    if [ -f "$cand/tensorflow/c/c_api.h" ] && [ -f "$cand/tensorflow/c/kernels.h" ]; then
      incdir=$cand
      return 0
    fi
  done
  return 1
}

version=""
if [ -n "${STRUCTTENSOR_TF_DIR:-}" ]; then
  tfdir=$(cd "$STRUCTTENSOR_TF_DIR" 2>/dev/null && pwd) ||
    die "STRUCTTENSOR_TF_DIR=$STRUCTTENSOR_TF_DIR is not a directory"
  find_layout "$tfdir" || die "STRUCTTENSOR_TF_DIR=$tfdir: want lib/libtensorflow{,_cc}.so.2, lib/libtensorflow_framework.so.2 and include/tensorflow/c/{c_api,kernels}.h (or a wheel's tensorflow/ directory)"
  # A tree from a libtensorflow tarball has fully versioned library names.
  v=$(cd "$libdir" && ls libtensorflow_framework.so.2.* 2>/dev/null | head -n1 | sed 's/^libtensorflow_framework\.so\.//') || true
  version=$v
else
  venv=$root/.venv
  if [ -n "${STRUCTTENSOR_TF_VENV:-}" ]; then
    venv=$STRUCTTENSOR_TF_VENV
    pin=$(grep -m1 '^tensorflow-cpu' python/requirements.txt) || die "no tensorflow-cpu pin in python/requirements.txt"
    stamp="$venv/.structtensor-$(printf '%s' "$pin" | sha256sum | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
      if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ] && [ -n "$(ls -A "$venv" 2>/dev/null)" ]; then
        die "STRUCTTENSOR_TF_VENV=$venv exists and is not a virtualenv: give a new directory"
      fi
      echo "setup-tf: installing $pin into $venv" >&2
      rm -rf "$venv"
      "${PYTHON:-python3}" -m venv "$venv"
      "$venv/bin/pip" install --quiet --prefer-binary "$pin"
      touch "$stamp"
    fi
  else
    scripts/setup-python.sh main
  fi
  shopt -s nullglob
  wheels=("$venv"/lib/python3*/site-packages/tensorflow)
  shopt -u nullglob
  [ ${#wheels[@]} -ge 1 ] || die "no tensorflow package under $venv/lib/python3*/site-packages (did its installation fail?)"
  tfdir=${wheels[0]}
  find_layout "$tfdir" || die "$tfdir: the wheel lacks libtensorflow_cc.so.2, libtensorflow_framework.so.2 or include/tensorflow/c/*.h"
fi
# A wheel records its version next to it.
for meta in "$(dirname "$tfdir")"/tensorflow*.dist-info/METADATA; do
  [ -z "$version" ] && [ -f "$meta" ] && version=$(sed -n 's/^Version: //p' "$meta" | head -n1)
done
version=${version:-2}

# pkg-config splits on spaces; refuse paths it would mangle.
case "$libdir$incdir" in *[[:space:]]*) die "the TensorFlow path must not contain spaces: $libdir" ;; esac

content="# Generated by scripts/setup-tf.sh; do not edit.
libdir=$libdir
includedir=$incdir

Name: tensorflow
Description: TensorFlow C API runtime ($tfdir)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,--push-state,--as-needed -lstdc++ -l:$corelib -l:libtensorflow_framework.so.2 -Wl,--pop-state -Wl,-rpath,\${libdir}
"

mkdir -p "$out_dir"
if [ ! -f "$out" ] || [ "$(cat "$out")" != "${content%$'\n'}" ]; then
  printf '%s' "$content" >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "setup-tf: wrote $out (TensorFlow $version at $libdir)" >&2
fi
echo "$out"
