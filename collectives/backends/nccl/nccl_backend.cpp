#include "collectives/backends/nccl/nccl_backend.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "collectives/backends/nccl/comm_map.hpp"
#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/env_slot.hpp"
#include "collectives/backends/nccl/nccl_algorithms.hpp"
#include "collectives/backends/nccl/nccl_comm.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "collectives/backends/nccl/nccl_step.hpp"
#include "collectives/backends/nccl/tuning_capture.hpp"
#include "core/watchdog.hpp"

namespace cb::nccl {

namespace {

class NcclBackend : public Backend {
 public:
  explicit NcclBackend(const BackendOptions& o)
      : lib_(load(o.flag("--nccl-lib"))),
        control_(o.control),
        gpus_(std::max(1, o.gpus_per_process)),
        probe_ops_(o.ops.empty() ? std::vector<ReduceOp>{ReduceOp::Sum} : o.ops) {
    blocking_ = blocking_communicators(std::getenv("COMMBENCH_NCCL_BLOCKING"));
    graph_calls_ = cuda_graph_calls(o.flag("--cuda-graph"));
    // Before any NCCL thread exists: the environment entries that forced algorithms change
    // later (NCCL reads NCCL_ALGO and NCCL_PROTO at each communicator's set-up), and the
    // capture's variables (set for the whole run, or given their entries for per-call use).
    algo_ = std::make_unique<EnvSlot>("NCCL_ALGO");
    proto_ = std::make_unique<EnvSlot>("NCCL_PROTO");
    capture_ = std::make_unique<TuningCapture>(lib_, o.report_choice);
    watchdog_ = o.watchdog;
    devices_ = cuda::devices_for(o.launch.local_rank, gpus_);
    cuda::check(cudaSetDevice(devices_.front()), "cudaSetDevice");
    memory_ = cuda::make_device_memory(devices_);
    registry_ = std::make_shared<CommRegistry>(lib_.fn.CommAbort);
    if (o.watchdog) {
      o.watchdog->on_fire(
          [registry = registry_] { registry->abort_all(std::chrono::seconds(10)); });
    }
    fp8_ = lib_.at_least(2, 24);
    for (int d : devices_) fp8_ = fp8_ && cuda::compute_major(d) >= 9;  // NCCL's fp8 kernels
    for (DType t : o.dtypes.empty() ? std::vector<DType>{DType::Float} : o.dtypes) {
      if (supports(t)) probe_dtypes_.push_back(t);
    }
    // A per-call capture runs one more collective, so every process must be able to do it.
    const bool per_call = capture_->mode() == TuningCapture::Mode::PerCall;
    // Without a control channel (`list`) this process is the whole run; open() needs one.
    for (const auto& m :
         control_ ? control_->allgather(per_call ? "1" : "0") : std::vector<std::string>{}) {
      if (m != "1" && per_call) capture_->turn_off("another rank cannot capture NCCL's log");
    }
    rank_ = control_ ? control_->rank() * gpus_ : 0;
    size_ = control_ ? control_->size() * gpus_ : gpus_;
    detail_ = fmt::format("NCCL {} ({}); CUDA {}", lib_.version.text(), lib_.path, cuda::summary());
  }
  ~NcclBackend() override { comms_.clear(); }

  std::string name() const override { return "nccl"; }
  std::string library() const override { return "NCCL " + lib_.version.text(); }
  std::string library_detail() const override { return detail_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::optional<int> local_gpu() const override {
    return devices_.size() == 1 ? std::optional<int>(devices_.front()) : std::nullopt;
  }
  bool supports(Collective) const override { return true; }
  bool supports(DType t) const override {
    if (!datatype_code(t)) return false;
    if (t == DType::Fp8E4M3 || t == DType::Fp8E5M2) return fp8_;
    return true;  // bfloat16 and avg need 2.10; the minimum is 2.14
  }
  bool supports(Collective c, ReduceOp op) const override {
    return info(c).reduces ? redop_code(op).has_value() : op == ReduceOp::None;
  }
  std::string unsupported(DType t, ReduceOp op) const override {
    // NCCL's avg multiplies by 1/nranks in the element type, which it defines for integers,
    // half, bfloat16, float and double only: fp8 avg is ncclInvalidArgument (seen on 2.28.3).
    if (op == ReduceOp::Avg && (t == DType::Fp8E4M3 || t == DType::Fp8E5M2)) {
      return "NCCL has no fp8 average";
    }
    return {};
  }
  std::string implementation(Collective c) const override {
    const Functions& f = lib_.fn;
    switch (c) {
      case Collective::AllToAll:
        return std::string(f.AlltoAll ? "native ncclAlltoAll" : "grouped ncclSend/ncclRecv") +
               "; in place copies the input aside first (counted in the time)";
      case Collective::Gather:
        return f.Gather ? "native ncclGather" : "grouped ncclSend/ncclRecv to the root";
      case Collective::Scatter:
        return f.Scatter ? "native ncclScatter" : "grouped ncclSend/ncclRecv from the root";
      case Collective::SendRecv:
        return "grouped ncclSend to rank+1 and ncclRecv from rank-1; in place copies the input "
               "aside first";
      case Collective::Barrier:
        return "one-element float ncclAllReduce, complete when its stream is idle";
      case Collective::AllToAllV:
        return "grouped ncclSend/ncclRecv of each peer's block, none for an empty one (as "
               "nccl-tests); out of place only";
      default:
        return "native";
    }
  }
  std::vector<std::string> algorithms(Collective c) const override {
    return has_algorithms(c) ? algorithm_names(lib_.code()) : std::vector<std::string>{};
  }
  Memory& memory() override { return *memory_; }
  std::unique_ptr<StepDriver> make_step_driver() override { return make_nccl_step_driver(); }

  Opened open(Collective c, const std::string& algorithm) override {
    std::optional<ForcedAlgorithm> forced;
    if (algorithm != "default") {
      if (!has_algorithms(c)) return {nullptr, "NCCL's algorithm selection does not apply"};
      forced = parse_algorithm(algorithm);
      if (!forced) return {nullptr, "not an NCCL algorithm/protocol name"};
      if (size_ == 1) return {nullptr, "a single rank copies locally; NCCL selects no algorithm"};
    }
    if (!control_) runtime_error("internal: NCCL communicators need the run's control channel");
    std::string failure;
    int code = kSuccess;
    std::shared_ptr<NcclCommunicator> comm = comms_.acquire(algorithm, [&] {
      if (forced) {
        algo_->set(forced->algo);
        proto_->set(forced->proto);
      }
      auto made = NcclCommunicator::create(setup(), algorithm, &failure, &code);
      algo_->restore();
      proto_->restore();
      return made;
    });
    if (!comm) {
      if (!forced) runtime_error("NCCL {}", failure);
      return {nullptr, rejection_or_fault(code, "at communicator set-up", failure)};
    }
    if (forced && probed_.insert({c, algorithm}).second) {
      if (std::string why = comm->probe(c, probe_dtypes_, probe_ops_, &code); !why.empty()) {
        comms_.drop(algorithm);  // the probe aborted it
        return {nullptr, rejection_or_fault(code, "", why)};
      }
    }
    return {comm, ""};
  }

 private:
  CommSetup setup() {
    CommSetup s;
    s.lib = &lib_;
    s.registry = registry_;
    s.memory = memory_.get();
    s.devices = devices_;
    s.first_rank = rank_;
    s.nranks = size_;
    s.control = control_;
    s.blocking = blocking_;
    s.capture = capture_.get();
    s.watchdog = watchdog_;
    s.graph_calls = graph_calls_;
    return s;
  }

  const Library& lib_;
  Control* control_;
  int gpus_;
  std::vector<ReduceOp> probe_ops_;
  std::vector<DType> probe_dtypes_;
  std::unique_ptr<EnvSlot> algo_, proto_;
  std::unique_ptr<TuningCapture> capture_;
  Watchdog* watchdog_ = nullptr;
  std::vector<int> devices_;
  std::unique_ptr<cuda::DeviceMemory> memory_;
  std::shared_ptr<CommRegistry> registry_;
  bool fp8_ = false;
  bool blocking_ = true;
  int graph_calls_ = 0;  // --cuda-graph
  int rank_ = 0, size_ = 1;
  std::string detail_;
  CommMap<NcclCommunicator> comms_;
  std::set<std::pair<Collective, std::string>> probed_;
};

}  // namespace

std::string unavailable_reason(const BackendOptions& o) {
  if (o.memory_explicit && o.memory == MemoryKind::Host) {
    return "it needs device memory and --memory host was given";
  }
  LoadResult r = try_load(o.flag("--nccl-lib"));
  if (!r.library) {
    if (r.kind == ErrorKind::Usage) throw Error(r.kind, r.error);
    return r.error;
  }
  return cuda::no_device_reason();
}

std::unique_ptr<Backend> make_backend(const BackendOptions& o) {
  return std::make_unique<NcclBackend>(o);
}

}  // namespace cb::nccl
