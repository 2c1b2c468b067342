#include "bridge.h"

#include <string.h>

// Implemented in Go (release.go): unpins the Go memory a tensor borrowed.
extern void tfbRelease(uintptr_t handle);

static size_t tfb_alignment(void) {
  size_t align = TF_TensorDefaultAlignment();
  return align < 64 ? 64 : align;
}

static void tfb_free_strings(void* data, size_t len, void* arg) {
  (void)arg;
  TF_TString* s = (TF_TString*)data;
  size_t n = len / sizeof(TF_TString);
  for (size_t i = 0; i < n; i++) TF_TString_Dealloc(&s[i]);
  free(data);
}

TF_Tensor* tfb_new_string_tensor(const int64_t* dims, int ndims,
                                 const char* data, const int64_t* offsets,
                                 int64_t n) {
  size_t align = tfb_alignment();
  size_t len = (size_t)n * sizeof(TF_TString);
  size_t alloc = (len + align - 1) / align * align;
  if (alloc == 0) alloc = align;
  TF_TString* s = (TF_TString*)aligned_alloc(align, alloc);
  if (s == NULL) return NULL;
  for (int64_t i = 0; i < n; i++) {
    TF_TString_Init(&s[i]);
    TF_TString_Copy(&s[i], data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
  }
  // On failure TF_NewTensor has already released s through the deallocator.
  return TF_NewTensor(TF_STRING, dims, ndims, s, len, tfb_free_strings, NULL);
}

int64_t tfb_string_offsets(const TF_Tensor* t, int64_t n, int64_t* offsets) {
  const TF_TString* s = (const TF_TString*)TF_TensorData(t);
  int64_t total = 0;
  offsets[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    total += (int64_t)TF_TString_GetSize(&s[i]);
    offsets[i + 1] = total;
  }
  return total;
}

void tfb_string_copy(const TF_Tensor* t, int64_t n, char* dst) {
  const TF_TString* s = (const TF_TString*)TF_TensorData(t);
  for (int64_t i = 0; i < n; i++) {
    size_t k = TF_TString_GetSize(&s[i]);
    if (k > 0) memcpy(dst, TF_TString_GetDataPointer(&s[i]), k);
    dst += k;
  }
}

static void tfb_free_views(void* data, size_t len, void* arg) {
  (void)len;
  free(data);  // views own nothing; only the TF_TString array is ours
  tfbRelease((uintptr_t)arg);
}

TF_Tensor* tfb_new_string_view_tensor(const int64_t* dims, int ndims,
                                      const char* data, const int64_t* offsets,
                                      int64_t n, uintptr_t release) {
  size_t align = tfb_alignment();
  size_t len = (size_t)n * sizeof(TF_TString);
  size_t alloc = (len + align - 1) / align * align;
  if (alloc == 0) alloc = align;
  TF_TString* s = (TF_TString*)aligned_alloc(align, alloc);
  if (s == NULL) {
    tfbRelease(release);  // NULL always means released, as from TF_NewTensor
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    TF_TString_Init(&s[i]);
    TF_TString_AssignView(&s[i], data + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
  }
  return TF_NewTensor(TF_STRING, dims, ndims, s, len, tfb_free_views, (void*)release);
}

static void tfb_release_borrowed(void* data, size_t len, void* arg) {
  (void)data;
  (void)len;
  tfbRelease((uintptr_t)arg);
}

TF_Tensor* tfb_new_borrowed_tensor(TF_DataType dtype, const int64_t* dims,
                                   int ndims, void* data, size_t len,
                                   uintptr_t release) {
  return TF_NewTensor(dtype, dims, ndims, data, len, tfb_release_borrowed, (void*)release);
}
