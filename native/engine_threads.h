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
  return int32_t(std::max(1u, std::thread::hardware_concurrency()));
}

// Workers is the process's pool of engine threads, started on demand up
// to default_threads() - 1 (the calling thread of a decode is the other
// worker) and kept for later decodes. A decode asks for helpers and
// works itself; helpers busy with other decodes are not waited for
// (their share is done by whoever is free), so a pool of any size,
// even none (a thread that cannot start), only changes the speed. It is
// never destroyed: its threads may outlive static destructors at exit.
//
// A helper sleeps as soon as its job is done. Waking it took 50 us on
// average in a KVM guest (cpuidle haltpoll), from the job queued to the
// helper taking it; a decode on two threads runs the pool two to four
// times a batch. Helpers that spun for up to 200 us after a job before
// sleeping took the next in 7-8 us, and 8 MB batches of flat records
// back to back ran up to 4% faster, but with the process's CPUs busy or
// idle for 14 ms between calls (as when two decoders alternate) they
// gained nothing and the spins cost CPU time (Intel Xeon model 167).
// Nor did two narrower spins: waking the helpers at a batch's start, so
// that their wake-up overlaps the batch's set-up (one thread's work
// started 45 us before the other's on 8 MB batches of flat records, 19
// us after), and having a helper spin up to 200 us after its chunk for
// the close-up that follows. On two threads in 8 MB batches, calls
// alternating, flat records stayed at 1.61-1.63x one thread's speed and
// tf.Examples 1.64-1.76x against 1.65-1.71x, within the runs' spread:
// the notification moved 12-20 us onto the caller's set-up, and the
// close-up divides its outputs dynamically, so a late helper only
// leaves the caller to start it alone.
class Workers {
 public:
  static Workers& get() {
    static Workers* w = new Workers;
    return *w;
  }

  // run calls fn on the calling thread and on up to helpers pool
  // threads, and returns once every call that started has returned.
  void run(int64_t helpers, const std::function<void()>& fn) {
    Job job{&fn};
    if (helpers > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      job.queued = helpers;
      queue_.push_back(&job);
      spawn(helpers);
      steer(helpers);
    }
    if (helpers > 0) ready_.notify_all();
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
      if (!h->idle || h->steered) continue;
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
      if (--job->queued == 0) queue_.pop_front();
      job->running++;
      idle_--;
      self->idle = false;
      lock.unlock();
      (*job->fn)();
      lock.lock();
      idle_++;
      self->idle = true;
      if (--job->running == 0) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_, done_;
  std::deque<Job*> queue_;
  std::vector<std::unique_ptr<Helper>> helpers_;  // the pool's threads, started and not retired
  int64_t idle_ = 0;                                // those of helpers_ without a job
};

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_THREADS_H_
