// Gloo backend: one TCP context shared by this backend's communicators, each communicator a
// (collective, algorithm) pair that prepares its Gloo call once per buffer/count/type and then
// runs it back to back.
#include "collectives/backends/gloo/gloo_backend.hpp"

#include <fmt/format.h>
#include <gloo/rendezvous/hash_store.h>
#include <unistd.h>

#include <climits>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "collectives/backends/gloo/gloo_algorithms.hpp"
#include "collectives/backends/gloo/gloo_errors.hpp"
#include "collectives/backends/gloo/gloo_ops.hpp"
#include "collectives/backends/gloo/gloo_store.hpp"
#include "collectives/backends/gloo/gloo_transport.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"

#ifndef COMMBENCH_GLOO_VERSION
#define COMMBENCH_GLOO_VERSION "unknown"
#endif

namespace cb::gloo_backend {

namespace {

// The fields of a call that decide how it is prepared (not its data).
struct CallShape {
  void* send = nullptr;
  void* recv = nullptr;
  std::uint64_t count = 0;
  DType dtype = DType::Float;
  ReduceOp op = ReduceOp::None;
  Placement placement = Placement::Out;
  int root = 0;
  std::uint64_t blocks = 0;  // alltoallv: its blocks' id
  int local = 0;
  bool operator==(const CallShape&) const = default;
};

CallShape shape_of(const CollectiveCall& c) {
  return {c.send, c.recv, c.count, c.dtype, c.op, c.placement, c.root, c.blocks ? c.blocks->id : 0,
          c.local};
}

// Non-blocking collectives as PyTorch's ProcessGroupGloo runs them: a communication thread takes
// the started calls in order and runs each (prepared once per buffer and count) to completion,
// stamping when it ended. One thread per communicator, so a communicator's calls run in the
// order they were started, as every rank starts them. After a failure the calls queued behind it
// fail with it.
class CommThread {
 public:
  using Clock = std::chrono::steady_clock;
  using Ticket = Communicator::Ticket;

  explicit CommThread(std::function<void(const CollectiveCall&)> run) : run_(std::move(run)) {}
  ~CommThread() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    queued_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  Ticket start(const CollectiveCall& call) {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    const Ticket t = next_++;
    state_[t] = {};
    queue_.emplace_back(t, call);
    queued_.notify_all();
    return t;
  }

  std::optional<Clock::time_point> test(Ticket t) {
    std::lock_guard lock(mu_);
    return take(t);
  }

  void wait(Ticket t) {
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return state_.at(t).done.has_value() || state_.at(t).error; });
    if (state_.at(t).error) take(t);
  }

 private:
  struct State {
    std::optional<Clock::time_point> done;
    std::exception_ptr error;
  };

  // With mu_ held: the completion of a finished call (forgotten then), or its error rethrown.
  std::optional<Clock::time_point> take(Ticket t) {
    auto it = state_.find(t);
    if (it == state_.end()) runtime_error("internal: unknown Gloo ticket {}", t);
    if (it->second.error) {
      std::exception_ptr e = it->second.error;
      state_.erase(it);
      std::rethrow_exception(e);
    }
    auto done = it->second.done;
    if (done) state_.erase(it);
    return done;
  }

  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      auto [ticket, call] = queue_.front();
      queue_.pop_front();
      std::exception_ptr error = failed_;
      if (!error) {
        lock.unlock();
        try {
          run_(call);
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
      }
      if (error) {
        failed_ = error;
        state_[ticket].error = error;
      } else {
        state_[ticket].done = Clock::now();
      }
      done_.notify_all();
    }
  }

  std::function<void(const CollectiveCall&)> run_;
  std::mutex mu_;
  std::condition_variable queued_, done_;
  std::deque<std::pair<Ticket, CollectiveCall>> queue_;
  std::map<Ticket, State> state_;
  std::exception_ptr failed_;
  Ticket next_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(GlooCallSite site, Collective collective, std::string algorithm)
      : site_(std::move(site)), collective_(collective), algorithm_(std::move(algorithm)) {}
  int rank() const override { return site_.context->rank; }
  int size() const override { return site_.context->size; }

  void issue(const CollectiveCall& call) override {
    CallShape shape = shape_of(call);
    if (!prepared_ || !(shape == shape_)) {
      prepared_.reset();  // releases the previous registration before making a new one
      prepared_ = guarded("set-up of " + std::string(name(call.collective)),
                          [&] { return prepare(site_, algorithm_, call); });
      shape_ = shape;
    }
    guarded(name(call.collective), [&] { prepared_->run(); });
  }

  bool nonblocking() const override { return true; }
  Ticket start(const CollectiveCall& call) override { return thread().start(call); }
  std::optional<std::chrono::steady_clock::time_point> test(Ticket t) override {
    return thread().test(t);
  }
  void wait(Ticket t) override { thread().wait(t); }

  std::uint64_t in_place_output_offset(Collective c, int rank, std::uint64_t count) const override {
    // ReduceScatterHalvingDoubling leaves this rank's block at the start of the buffer.
    if (c == Collective::ReduceScatter && algorithm_ == "halving_doubling") return 0;
    return cb::in_place_output_offset(c, rank, count);
  }

  std::string skip_reason(const CollectiveCall& call) const override {
    if (call.collective == Collective::AllToAllV && call.placement == Placement::In) {
      return "in place: gloo::alltoallv reads its input while peers write its output, and has no "
             "in-place form";
    }
    // Gloo's reduction loops and legacy algorithms count elements in int.
    std::uint64_t elements = call.count;
    const auto& ci = info(call.collective);
    if (ci.send == Extent::PerRank || ci.recv == Extent::PerRank) {
      elements *= static_cast<std::uint64_t>(size());
    }
    if (elements > static_cast<std::uint64_t>(INT_MAX)) {
      return "Gloo counts elements in int: more than 2^31-1 elements per buffer";
    }
    // Legacy AllreduceBcube groups ranks by the context's base and returns wrong sums when the
    // number of ranks is not a multiple of it (seen at 3 ranks).
    const int base = site_.context->base;
    if (collective_ == Collective::AllReduce && algorithm_ == "bcube" && size() > 1 &&
        size() % base != 0) {
      return fmt::format("the number of ranks is not a multiple of {} (legacy AllreduceBcube)",
                         base);
    }
    return {};
  }

 private:
  GlooCallSite site_;
  Collective collective_;
  std::string algorithm_;
  // On the communication thread: each call prepared once per shape, then run.
  void run_started(const CollectiveCall& call) {
    const CallShape shape = shape_of(call);
    PreparedOp* op = nullptr;
    for (auto& [s, p] : started_ops_) {
      if (s == shape) op = p.get();
    }
    if (!op) {
      started_ops_.emplace_back(shape, guarded("set-up of " + std::string(name(call.collective)),
                                               [&] { return prepare(site_, algorithm_, call); }));
      op = started_ops_.back().second.get();
    }
    guarded(name(call.collective), [&] { op->run(); });
  }
  CommThread& thread() {
    if (!thread_)
      thread_ = std::make_unique<CommThread>([this](const CollectiveCall& c) { run_started(c); });
    return *thread_;
  }

  CallShape shape_;
  std::unique_ptr<PreparedOp> prepared_;
  std::vector<std::pair<CallShape, std::unique_ptr<PreparedOp>>> started_ops_;
  // Declared last: destroyed first, so its thread has stopped before what it runs goes.
  std::unique_ptr<CommThread> thread_;
};

class GlooBackend : public Backend {
 public:
  explicit GlooBackend(const BackendOptions& o)
      : options_(o), memory_(make_host_memory()), timeout_(gloo_timeout(o.timeout_seconds)) {
    if (o.control) {
      rank_ = o.control->rank();
      size_ = o.control->size();
    } else {
      rank_ = o.launch.rank;
      size_ = o.launch.size;
    }
    if (o.memory == MemoryKind::Device) {
      usage_error("the gloo backend runs on host memory only: use --memory host");
    }
    if (size_ > 1 && !o.control) {
      runtime_error("the gloo backend needs the run's control channel to rendezvous");
    }
    // Validate the interface before any rendezvous; the host list decides loopback or not.
    bool single_host = true;
    std::vector<std::string> hosts;
    if (o.control) {
      hosts = o.control->allgather(host_name(""));
      single_host = std::set<std::string>(hosts.begin(), hosts.end()).size() == 1;
    }
    transport_ = single_host || !o.flag("--gloo-iface").empty()
                     ? choose_transport(o.flag("--gloo-iface"))
                     : choose_transport_by_route(*o.control, hosts);
  }

  std::string name() const override { return "gloo"; }
  std::string library() const override { return library_version(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool supports(Collective) const override { return true; }
  bool supports(DType t) const override {
    switch (t) {
      case DType::Int8:
      case DType::Uint8:
      case DType::Int32:
      case DType::Uint32:
      case DType::Int64:
      case DType::Uint64:
      case DType::Half:
      case DType::Float:
      case DType::Double:
        return true;
      default:
        return false;
    }
  }
  bool supports(Collective c, ReduceOp op) const override {
    if (!info(c).reduces) return op == ReduceOp::None;
    return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Min ||
           op == ReduceOp::Max;
  }
  std::string implementation(Collective c) const override { return gloo_implementation(c); }
  std::vector<std::string> algorithms(Collective c) const override {
    std::vector<std::string> out;
    for (const auto& a : gloo_algorithms(c)) out.emplace_back(a.name);
    return out;
  }
  Memory& memory() override { return *memory_; }

  Opened open(Collective c, const std::string& algorithm) override {
    if (algorithm != "default" && !is_gloo_algorithm(c, algorithm)) {
      return {nullptr, "no such Gloo algorithm"};
    }
    connect_once();
    GlooCallSite site{context_, timeout_, next_tag_++};
    return {std::make_shared<GlooCommunicator>(std::move(site), c, algorithm), ""};
  }

 private:
  // One context for all of this backend's communicators: the runner runs one case at a time,
  // and Gloo keeps operations apart by slot and tag.
  void connect_once() {
    if (context_) return;
    device_ = make_device(transport_);
    if (options_.control) {
      ControlStore store(*options_.control);
      context_ = connect(store, device_, rank_, size_, timeout_);
    } else {
      ::gloo::rendezvous::HashStore store;
      context_ = connect(store, device_, rank_, size_, timeout_);
    }
  }

  BackendOptions options_;
  std::unique_ptr<Memory> memory_;
  std::chrono::milliseconds timeout_;
  TransportChoice transport_;
  std::shared_ptr<::gloo::transport::Device> device_;
  std::shared_ptr<::gloo::rendezvous::Context> context_;
  std::uint32_t next_tag_ = 1;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  return std::make_unique<GlooBackend>(options);
}

std::string library_version() {
  return std::string("Gloo ") + COMMBENCH_GLOO_VERSION;
}

}  // namespace cb::gloo_backend
