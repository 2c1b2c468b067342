// Worker threads: the process's pool of engine threads (Workers) and
// the thread limit.
//
// Part of the engine (engine.cc), which includes it once after the
// standard headers it relies on: the engine is one translation unit, so
// that the record walker and the wire decoders inline into each other.
// Not a public header; the C ABI is include/structtensor_native.h.

#ifndef STRUCTTENSOR_NATIVE_ENGINE_THREADS_H_
#define STRUCTTENSOR_NATIVE_ENGINE_THREADS_H_

namespace {

// ---------------------------------------------------------------------
// Worker threads.

// thread_limit bounds the engine's worker threads in the process, all
// decodes together (st_set_thread_limit; Go sets it from GOMAXPROCS). Its
// default counts the CPUs the process may run on.
std::atomic<int32_t> thread_limit{0};

// fail_thread_starts makes spawn act as if no thread could start
// (st_test_fail_thread_starts).
std::atomic<bool> fail_thread_starts{false};

// steered_helpers counts the pool threads steered off a waker's CPU
// (Workers::steer; st_test_steered_helpers).
std::atomic<int64_t> steered_helpers{0};

int32_t default_threads() {
  int32_t n = thread_limit.load(std::memory_order_relaxed);
  if (n > 0) return n;
  // Counted once: glibc reads it from /sys at every call (16 us in a
  // virtual machine), and Workers asks at every job, holding its lock.
  static const int32_t cpus = int32_t(std::max(1u, std::thread::hardware_concurrency()));
  return cpus;
}

// Workers is the process's pool of engine threads, started on demand up
// to default_threads() - 1 (the calling thread of a decode is the other
// worker) and kept for later decodes. A decode asks for helpers and
// works itself; helpers busy with other decodes are not waited for
// (their share is done by whoever is free), so a pool of any size,
// even none (a thread that cannot start), only changes the speed. It is
// never destroyed: its threads may outlive static destructors at exit.
//
// Waking a sleeping helper is slow in a virtual machine: on two threads
// in 8 MB batches of flat records, calls alternating with one thread's
// (bench's lockstep, Intel Xeon model 167, KVM), the caller's
// notification took 15 us of its time (median; 34 us at the 90th
// percentile), the helper starting 35-40 us after it; a caller done
// before its helper slept and woke 37-50 us after the helper was done;
// and a batch runs the pool twice (the decode, then the close-up,
// assemble), so a batch of 2 ms lost about 150 us so. So a helper done
// with a job that another follows at once (run's kFollowUp: the decode
// before a close-up on the pool) watches for it for a while before it
// sleeps (kPollAfterJob), which the caller then need not wake (a
// notification without sleepers is no system call), and the caller of
// run watches its helpers end before it sleeps (kWatchHelpers). Timed by
// stamps in a throwaway build, the same runs: the helper then took the
// decode and the close-up of every batch but a call's first 1.3-1.8 us
// after they were queued, and the caller's notification 1.3-1.7 us.
// Watching costs CPU time, so a helper's watches may add up to an eighth
// of the time its jobs took (kPollShare): a process whose decodes come
// rarely pays that, not 200 us a decode.
//
// After a batch's last job a helper sleeps at once. It used to watch
// there too, for the next batch: but between two batches the caller
// closes up alone (a small close-up, kSerialCloseUpBytes), returns to Go,
// builds the result and lends the next batch's buffers, 220 us on flat
// records in 8 MB batches on an Intel Xeon model 207 (stamps again),
// longer than the watch, so the helper spun 200 us a batch (a profile put
// 3% of the process's CPU time in the pool's loop) and was then woken
// all the same. Sleeping at once, in lockstep with one thread on the
// same CPU (100 pairs of calls, means): flat in 8 MB batches went
// from 89-90% of one thread's MB per CPU-second to 95%, and from 1.72-1.75x
// one thread's wall speed to 1.76-1.77x; wide sparse and repeated
// records, ELWC in 8 MB batches and tf.Examples in 32 MB did not lose.
//
// Neither side of a job's hand-over blocks on the pool's lock while the
// other holds it: a thread that does sleeps in the kernel (a mutex in
// glibc does not spin) and wakes tens of microseconds after the lock is
// free. So the job is posted to watching helpers (posted_) only once the
// caller has let go of the lock, and the last helper to end marks the job
// finished, which the watching caller takes without the lock. Before,
// on tf.Examples by feature in 8 MB batches on two threads (same CPU and
// lockstep), a helper that was watching started 53 us after the decode
// did (median), blocked on the lock while the caller read the CPU count
// from /sys under it (the feature decoder's Go side never set the
// limit), and the caller returned 35 us after both threads' work ended,
// asleep until the helper, which had waited for the lock, marked its end;
// after, 6 us and 2 us.
//
// An earlier spin of up to 200 us after a job, with the caller's wait
// for its helpers unchanged, was judged by bench's ratios alone, whose
// spread run to run (a few percent) hid what it gained. Waking the
// helpers at a batch's start, so that their wake-up overlaps the batch's
// set-up, gained nothing: the notification moved 12-20 us onto the
// caller's set-up.
class Workers {
 public:
  static Workers& get() {
    static Workers* w = new Workers;
    return *w;
  }

  // What a caller of run does once the job ends: post another job at
  // once (kFollowUp: the close-up after a decode), after which its
  // helpers watch for it, or something else (kLastJob), when they sleep.
  enum Next { kLastJob, kFollowUp };

  // run calls fn on the calling thread and on up to helpers pool
  // threads, and returns once every call that started has returned.
  void run(int64_t helpers, const std::function<void()>& fn, Next next = kLastJob) {
    Job job{&fn};
    job.next = next;
    if (helpers > 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        job.queued = helpers;
        queue_.push_back(&job);
        spawn(helpers);
        steer(helpers);
      }
      posted_.fetch_add(1, std::memory_order_release);
      ready_.notify_all();
    }
    fn();
    if (helpers <= 0) return;
    std::unique_lock<std::mutex> lock(mu_);
    if (job.queued > 0) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (*it == &job) {
          queue_.erase(it);
          break;
        }
      }
      job.queued = 0;
    }
    if (job.running > 0) {
      // Helpers still at it: most end within microseconds of the caller
      // (the batch's work is shared out to the end), so watch them first;
      // sleeping, the caller took 37-50 us to wake once they were done.
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kWatchHelpers;
      for (int i = 1; !job.finished.load(std::memory_order_acquire); i++) {
        __builtin_ia32_pause();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
      }
      if (job.finished.load(std::memory_order_acquire)) return;
      lock.lock();
    }
    done_.wait(lock, [&] { return job.running == 0; });
  }

  // threads returns the number of pool threads started and not retired.
  int64_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return int64_t(helpers_.size());
  }

 private:
  struct Job {
    const std::function<void()>* fn;
    int64_t queued = 0;   // helper calls not yet taken (guarded by mu_)
    int64_t running = 0;  // helper calls under way (guarded by mu_)
    // finished is set, under mu_, by the helper whose call ends the job
    // (none queued, none running) as its last touch of the job: the
    // caller watching it may return without the lock.
    std::atomic<bool> finished{false};
    Next next = kLastJob;  // what the caller of run does once the job ends
  };

  // spawn starts threads until idle ones cover want or the limit is
  // reached. A thread that cannot start (std::system_error) is not an
  // error: the decode goes on with the threads there are.
  void spawn(int64_t want) {
    const int64_t limit = int64_t(default_threads()) - 1;
    while (idle_ < want && int64_t(helpers_.size()) < limit) {
      if (fail_thread_starts.load(std::memory_order_relaxed)) return;
      // Nothing after the thread starts may throw: it runs on h.
      std::unique_ptr<Helper> h;
      try {
        h.reset(new Helper);
        helpers_.reserve(helpers_.size() + 1);
        std::thread t(&Workers::loop, this, h.get());
        h->handle = t.native_handle();
        t.detach();
      } catch (const std::system_error&) {
        return;
      } catch (const std::bad_alloc&) {
        return;
      }
      helpers_.push_back(std::move(h));
      idle_++;
    }
  }

  // A Helper is one pool thread: its handle, whether it is idle, and
  // the CPUs it may run on while steer has it away from a waker's.
  struct Helper {
    std::thread::native_handle_type handle{};
    bool idle = true;
    bool polling = false;  // awake after a job, watching posted_ (loop)
    std::chrono::nanoseconds poll_credit{0};  // how long it may poll (loop; its own thread's)
#if defined(__linux__)
    bool steered = false;
    cpu_set_t cpus;  // what it may run on, to restore once it runs
#endif
  };

  // steer keeps up to n idle helpers about to be woken off the calling
  // thread's CPU, until each runs (loop restores its CPUs). Waking a
  // sleeping thread, a kernel may place it on the waker's CPU (a
  // virtual machine's guest kernel did, most of the time, to keep its
  // other virtual CPU halted), where the two then share one CPU until
  // the scheduler balances them (measured in native/doc.go). Only
  // where the helper may run elsewhere; a failure to steer leaves it as
  // it was.
  void steer(int64_t n) {
#if defined(__linux__)
    const int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE) return;
    for (auto& h : helpers_) {
      if (n <= 0) return;
      if (!h->idle || h->steered || h->polling) continue;
      n--;
      cpu_set_t away;
      if (pthread_getaffinity_np(h->handle, sizeof(h->cpus), &h->cpus) != 0 || !CPU_ISSET(cpu, &h->cpus) ||
          CPU_COUNT(&h->cpus) < 2) {
        continue;
      }
      away = h->cpus;
      CPU_CLR(cpu, &away);
      h->steered = pthread_setaffinity_np(h->handle, sizeof(away), &away) == 0;
      if (h->steered) steered_helpers.fetch_add(1, std::memory_order_relaxed);
    }
#else
    (void)n;
#endif
  }

  void loop(Helper* self) {
    std::unique_lock<std::mutex> lock(mu_);
    bool poll = false;  // a job that another follows just ended: watch for it before sleeping
    for (;;) {
      // Every wake-up gives a steered thread its CPUs back, also one that
      // finds the job already gone (its caller did it all) and sleeps on.
      for (;;) {
#if defined(__linux__)
        if (self->steered) {
          self->steered = false;
          // Should the CPUs it had be gone (the process moved to others
          // meanwhile), it takes the process's.
          if (pthread_setaffinity_np(self->handle, sizeof(self->cpus), &self->cpus) != 0 &&
              sched_getaffinity(getpid(), sizeof(self->cpus), &self->cpus) == 0) {
            pthread_setaffinity_np(self->handle, sizeof(self->cpus), &self->cpus);
          }
        }
#endif
        if (!queue_.empty() || int64_t(helpers_.size()) > int64_t(default_threads()) - 1) break;
        if (poll && self->poll_credit > std::chrono::nanoseconds(0)) {
          poll = false;
          self->polling = true;
          const int64_t seen = posted_.load(std::memory_order_relaxed);
          lock.unlock();
          const auto start = std::chrono::steady_clock::now();
          const auto until = start + std::min<std::chrono::nanoseconds>(kPollAfterJob, self->poll_credit);
          for (int i = 1; posted_.load(std::memory_order_acquire) == seen; i++) {
            __builtin_ia32_pause();
            if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
          }
          self->poll_credit -= std::chrono::steady_clock::now() - start;
          lock.lock();
          self->polling = false;
          continue;
        }
        ready_.wait(lock);
      }
      if (queue_.empty()) {  // the limit went down: this thread retires
        idle_--;
        for (auto it = helpers_.begin(); it != helpers_.end(); ++it) {
          if (it->get() == self) {
            helpers_.erase(it);
            break;
          }
        }
        return;
      }
      Job* job = queue_.front();
      const bool follow_up = job->next == kFollowUp;
      if (--job->queued == 0) queue_.pop_front();
      job->running++;
      idle_--;
      self->idle = false;
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      (*job->fn)();
      self->poll_credit = std::min<std::chrono::nanoseconds>(
          std::max<std::chrono::nanoseconds>(self->poll_credit, std::chrono::nanoseconds(0)) +
              (std::chrono::steady_clock::now() - start) / kPollShare,
          2 * kPollAfterJob);
      lock.lock();
      idle_++;
      self->idle = true;
      if (--job->running == 0) {
        if (job->queued == 0) job->finished.store(true, std::memory_order_release);
        done_.notify_all();  // (done_ is the pool's: the job may be gone)
      }
      poll = follow_up;
    }
  }

  // A helper done with a job another follows (kFollowUp) watches for it
  // for up to kPollAfterJob before it sleeps, as long as its credit
  // lasts: each job earns it 1/kPollShare of the job's time, so that watching costs at
  // most that share of the time the helpers work, however rarely the
  // jobs come. The caller of run watches its helpers end for up to
  // kWatchHelpers before it sleeps (see the class comment).
  static constexpr std::chrono::microseconds kPollAfterJob{200}, kWatchHelpers{50};
  static constexpr int kPollShare = 8;

  std::mutex mu_;
  std::condition_variable ready_, done_;
  std::deque<Job*> queue_;
  std::atomic<int64_t> posted_{0};  // jobs queued so far, for helpers polling
  std::vector<std::unique_ptr<Helper>> helpers_;  // the pool's threads, started and not retired
  int64_t idle_ = 0;                                // those of helpers_ without a job
};

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_THREADS_H_
