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
    return started_;
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
    while (idle_ < want && started_ < limit) {
      if (fail_thread_starts.load(std::memory_order_relaxed)) return;
      try {
        std::thread(&Workers::loop, this).detach();
      } catch (const std::system_error&) {
        return;
      } catch (const std::bad_alloc&) {
        return;
      }
      started_++;
      idle_++;
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ready_.wait(lock, [&] { return !queue_.empty() || started_ > int64_t(default_threads()) - 1; });
      if (queue_.empty()) {  // the limit went down: this thread retires
        started_--;
        idle_--;
        return;
      }
      Job* job = queue_.front();
      if (--job->queued == 0) queue_.pop_front();
      job->running++;
      idle_--;
      lock.unlock();
      (*job->fn)();
      lock.lock();
      idle_++;
      if (--job->running == 0) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_, done_;
  std::deque<Job*> queue_;
  int64_t started_ = 0, idle_ = 0;
};

}  // namespace

#endif  // STRUCTTENSOR_NATIVE_ENGINE_THREADS_H_
