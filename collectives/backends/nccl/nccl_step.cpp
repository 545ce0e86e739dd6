#include "collectives/backends/nccl/nccl_step.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/nccl_comm.hpp"
#include "collectives/backends/nccl/spin_kernel.hpp"
#include "collectives/patterns/step_figures.hpp"
#include "collectives/patterns/step_program.hpp"
#include "collectives/step_call.hpp"
#include "common/error.hpp"

namespace cb::nccl {

namespace {

// Compute is enqueued in kernels of at most this long, so that communication kernels find SM
// slots between them as they do between a backward pass's kernels.
constexpr double kSliceUs = 100;

// Events of one GPU, reused from step to step.
class EventList {
 public:
  ~EventList() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  void rewind() { used_ = 0; }
  cudaEvent_t next() {
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      cuda::check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    return events_[used_++];
  }

 private:
  std::vector<cudaEvent_t> events_;
  std::size_t used_ = 0;
};

struct Gpu {
  int device = 0;
  cudaStream_t compute = nullptr;
  int sms = 1;
  EventList events;
};

double elapsed_us(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  cuda::check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e3;
}

void record(cudaEvent_t e, cudaStream_t s) {
  cuda::check(cudaEventRecord(e, s), "cudaEventRecord");
}

void stream_wait(cudaStream_t s, cudaEvent_t e) {
  cuda::check(cudaStreamWaitEvent(s, e, 0), "cudaStreamWaitEvent");
}

class NcclStepDriver : public StepDriver {
 public:
  ~NcclStepDriver() override {
    for (auto& g : gpus_) {
      cuda::DeviceScope scope(g->device);
      if (g->compute) {
        cudaStreamSynchronize(g->compute);
        cudaStreamDestroy(g->compute);
      }
    }
  }

  StepTimeline run(const StepProgram& program, const std::vector<Communicator*>& channels,
                   const std::vector<void*>& buffers) override {
    std::vector<NcclCommunicator*> comms;
    for (Communicator* c : channels) {
      auto* n = dynamic_cast<NcclCommunicator*>(c);
      if (!n) runtime_error("internal: the NCCL step driver was given another backend's channel");
      comms.push_back(n);
    }
    // streams[c][l]: channel c's stream on lane l.
    std::vector<std::vector<cuda::TimedStream>> streams;
    for (auto* c : comms) streams.push_back(c->lane_streams());
    prepare(streams.front());
    const std::size_t lanes = gpus_.size();

    struct LaneEvents {
      cudaEvent_t start = nullptr, end = nullptr;
      std::vector<std::pair<cudaEvent_t, cudaEvent_t>> computes;
      std::vector<cudaEvent_t> op_start, op_end;
    };
    std::vector<LaneEvents> ev(lanes);
    for (std::size_t l = 0; l < lanes; ++l) {
      Gpu& g = *gpus_[l];
      cuda::DeviceScope scope(g.device);
      g.events.rewind();
      ev[l].op_start.assign(program.ops.size(), nullptr);
      ev[l].op_end.assign(program.ops.size(), nullptr);
      ev[l].start = g.events.next();
      record(ev[l].start, g.compute);
      for (auto& s : streams) stream_wait(s[l].stream, ev[l].start);
    }
    for (const StepAction& a : program.actions) {
      switch (a.kind) {
        case StepAction::Kind::Compute:
          for (std::size_t l = 0; l < lanes; ++l) {
            Gpu& g = *gpus_[l];
            cuda::DeviceScope scope(g.device);
            auto before = g.events.next(), after = g.events.next();
            record(before, g.compute);
            for (double left = a.us; left > 0; left -= kSliceUs) {
              const double us = std::min(left, kSliceUs);
              cuda::launch_spin(static_cast<std::uint64_t>(std::llround(us * 1e3)), g.sms,
                                g.compute);
            }
            cuda::check(cudaGetLastError(), "the compute kernel's launch");
            record(after, g.compute);
            ev[l].computes.emplace_back(before, after);
          }
          break;
        case StepAction::Kind::Issue: {
          const StepOp& op = program.ops[a.op];
          const auto channel = static_cast<std::size_t>(op.channel);
          for (std::size_t l = 0; l < lanes; ++l) {
            Gpu& g = *gpus_[l];
            cuda::DeviceScope scope(g.device);
            cudaEvent_t ready = g.events.next();
            record(ready, g.compute);
            stream_wait(streams[channel][l].stream, ready);
            record(ev[l].op_start[a.op] = g.events.next(), streams[channel][l].stream);
          }
          comms[channel]->enqueue_call(step_call(op, buffers));
          for (std::size_t l = 0; l < lanes; ++l) {
            cuda::DeviceScope scope(gpus_[l]->device);
            record(ev[l].op_end[a.op] = gpus_[l]->events.next(), streams[channel][l].stream);
          }
          break;
        }
        case StepAction::Kind::Wait:
          for (std::size_t l = 0; l < lanes; ++l) {
            cuda::DeviceScope scope(gpus_[l]->device);
            stream_wait(gpus_[l]->compute, ev[l].op_end[a.op]);
          }
          break;
      }
    }
    for (std::size_t l = 0; l < lanes; ++l) {
      Gpu& g = *gpus_[l];
      cuda::DeviceScope scope(g.device);
      for (cudaEvent_t e : ev[l].op_end) {
        if (e) stream_wait(g.compute, e);
      }
      record(ev[l].end = g.events.next(), g.compute);
    }
    // The communicators' own waits watch for NCCL's asynchronous errors; the compute streams
    // end after every collective.
    for (auto* c : comms) c->complete();
    for (auto& g : gpus_) {
      cuda::DeviceScope scope(g->device);
      cuda::check(cudaStreamSynchronize(g->compute), "cudaStreamSynchronize (compute)");
    }

    StepTimeline t;
    t.start_us.assign(program.ops.size(), 0);
    t.end_us.assign(program.ops.size(), 0);
    for (std::size_t l = 0; l < lanes; ++l) {
      cuda::DeviceScope scope(gpus_[l]->device);
      const LaneEvents& e = ev[l];
      double compute = 0;
      for (const auto& [b, a] : e.computes) compute += elapsed_us(b, a);
      t.compute_us = std::max(t.compute_us, compute);
      t.step_us = std::max(t.step_us, elapsed_us(e.start, e.end));
      for (std::size_t i = 0; i < program.ops.size(); ++i) {
        if (!e.op_start[i]) continue;
        t.start_us[i] = std::max(t.start_us[i], elapsed_us(e.start, e.op_start[i]));
        t.end_us[i] = std::max(t.end_us[i], elapsed_us(e.start, e.op_end[i]));
      }
    }
    return t;
  }

 private:
  // A compute stream on each lane's GPU, made on the first step.
  void prepare(const std::vector<cuda::TimedStream>& lanes) {
    if (!gpus_.empty()) return;
    for (const auto& lane : lanes) {
      auto g = std::make_unique<Gpu>();
      g->device = lane.device;
      cuda::DeviceScope scope(lane.device);
      cuda::check(cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking),
                  "cudaStreamCreate (compute)");
      cuda::check(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, lane.device),
                  "cudaDeviceGetAttribute");
      gpus_.push_back(std::move(g));
    }
  }

  std::vector<std::unique_ptr<Gpu>> gpus_;
};

}  // namespace

std::unique_ptr<StepDriver> make_nccl_step_driver() {
  return std::make_unique<NcclStepDriver>();
}

}  // namespace cb::nccl
