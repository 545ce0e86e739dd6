// A training step's communication as a program: its collectives (with the buffers they use) and
// the order in which the step computes, issues them without waiting, and waits for them. The
// same program runs on every rank; a driver (collectives/engine/step_driver.hpp) carries it out
// and times it. A pattern is a way to build one: DDP's buckets overlapping the backward pass, or
// FSDP's gathers and reduce-scatters around each unit's forward and backward.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "collectives/patterns/ddp_buckets.hpp"
#include "collectives/patterns/fsdp_units.hpp"
#include "collectives/patterns/model.hpp"

namespace cb {

struct StepOp {
  Collective collective = Collective::AllReduce;
  DType dtype = DType::Float;
  Placement placement = Placement::Out;
  std::uint64_t count = 0;    // per-rank count, as the catalogue counts it
  std::uint64_t bytes = 0;    // the reported size (output.md: nccl-tests convention)
  std::uint64_t params = 0;   // parameter elements it carries, padding excluded
  std::uint64_t tensors = 0;  // parameter tensors it carries
  int channel = 0;            // which of the program's communicators issues it
  int send = -1;              // buffer indices into StepProgram::buffers (-1: none, in place)
  int recv = 0;
  std::string phase;                       // "backward" or "forward"
  std::string label;                       // "bucket 2", "unit transformer.h.0"
  std::vector<std::size_t> param_indices;  // its parameters (model order; a bucket's as filled)
};

struct StepAction {
  enum class Kind {
    Compute,  // busy for `us` microseconds
    Issue,    // start collective `op` without waiting
    Wait      // wait until collective `op` has completed before going on
  };
  Kind kind = Kind::Compute;
  double us = 0;
  std::size_t op = 0;
};

struct StepProgram {
  std::string pattern;                 // "ddp" or "fsdp"
  std::vector<Collective> channels;    // the communicator each channel opens
  std::vector<std::uint64_t> buffers;  // bytes of each buffer
  std::vector<StepOp> ops;             // in the order they are issued
  std::vector<StepAction> actions;     // then every issued op is waited for: the step's end
  double compute_us() const;           // the compute actions' time in all
};

// DDP: the backward pass parameter by parameter in gradient-ready order, each bucket's
// allreduce (in place, sum) issued as soon as its gradients are ready and the buckets before it
// have been issued; `backward_us` per parameter in model order.
StepProgram ddp_program(const Model& model, const std::vector<DdpBucket>& buckets,
                        const std::vector<double>& backward_us);

// FSDP full shard, as FSDP's hooks issue it with forward and backward prefetch (BACKWARD_PRE):
// forward unit by unit, each unit's allgather issued together with its successor's, before it
// waits for its own and computes; then backward in reverse order, each unit's allgather issued
// together with its predecessor's, waited for before its backward, and its reduce_scatter issued
// right after that backward. Forward compute is `forward_ratio` x the unit's backward. Every
// unit has one padded full buffer and one shard buffer: its gathers and its reduce_scatter use
// them in turn, never at once.
StepProgram fsdp_program(const Model& model, const std::vector<FsdpUnit>& units,
                         const std::vector<double>& backward_us, double forward_ratio);

}  // namespace cb
