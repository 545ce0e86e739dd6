// options -> plan: the cases one backend will run, in order.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/catalogue/split.hpp"
#include "collectives/catalogue/traffic.hpp"

namespace cb {

struct SweepOptions {
  std::vector<Collective> collectives;
  std::vector<std::string> algorithms = {"default"};  // "default", "all", or names
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64ULL << 20;
  double step_factor = 2.0;
  std::uint64_t step_bytes = 0;  // additive step when > 0
  std::vector<DType> dtypes = {DType::Float};
  std::vector<ReduceOp> ops = {ReduceOp::Sum};
  std::vector<Placement> placements = {Placement::Out};
  int root = 0;
  bool all_roots = false;
  SplitSettings split;  // alltoallv's splits, each a series of cases
};

struct Case {
  Collective collective;
  std::string algorithm;
  DType dtype;
  ReduceOp op;  // None for collectives that do not reduce
  int root;     // -1 where the collective has no root
  std::uint64_t count;
  std::uint64_t bytes;  // reported size
  Placement placement;
  // alltoallv: its split (null for the other collectives), the size axis in elements the matrix
  // was made for, whether this is the split's uniform twin (its total spread evenly: the
  // imbalance tax's reference), and the matrix's figures. count and bytes are then the mean a
  // rank sends.
  std::shared_ptr<const SplitSpec> split{};
  std::uint64_t split_elements = 0;
  bool uniform_twin = false;
  TrafficFigures traffic{};
};

// alltoallv: the traffic matrix of case `c` on `nranks` ranks (its split's, or its twin's).
Traffic case_traffic(const Case& c, int nranks);
// Whether an alltoallv case has a uniform twin measured beside it (every split but uniform).
bool has_twin(const Case& c);
// The uniform twin of alltoallv case `c`: the same total over every pair alike.
Case uniform_twin(const Case& c, int nranks);

// Requested sizes from min to max (inclusive), multiplicative or additive.
std::vector<std::uint64_t> sweep_sizes(const SweepOptions& o);

// Cases for `backend` with `nranks` ranks, ordered collective, algorithm, dtype, op, root, split
// (alltoallv), size, placement. Combinations the backend does not offer are left out and described
// in `notes`.
std::vector<Case> plan_cases(const Backend& backend, const SweepOptions& o, int nranks,
                             std::vector<std::string>& notes);

// Every backend's cases (plans[i] for backends[i]), before anything is measured so bad
// combinations fail fast. With `report` (rank 0), prints the planning notes and a warning for a
// backend that cannot force the requested algorithms. Usage error when nothing is left to run.
std::vector<std::vector<Case>> plan_backends(const std::vector<std::unique_ptr<Backend>>& backends,
                                             const SweepOptions& sweep, bool report);

// Collective over `control`: rank 0 reads the files of `splits`' matrices and every rank takes
// its text, so that ranks on hosts without the file split alike (a usage Error on every rank
// when rank 0 cannot read or parse one).
void share_split_matrices(Control& control, SplitSettings& splits);

// meta.split: the splits the plans measure, the router's seed and the tokens' hidden size; null
// when no plan has an alltoallv case.
nlohmann::json split_meta(const SweepOptions& sweep, const std::vector<std::vector<Case>>& plans);

// Largest send / receive (or in-place) buffer, in bytes, over `cases`.
struct BufferNeeds {
  std::uint64_t send = 0;
  std::uint64_t recv = 0;
};
BufferNeeds buffer_needs(const std::vector<Case>& cases, int nranks);

// The host buffers of every rank on each host against that host's available memory, before any
// is allocated; every rank learns every host's verdict so that all stop together (usage error).
// Collective over `control`; `ranks_here` ranks share this rank's host.
void check_host_memory(Control& control, int ranks_here,
                       const std::vector<std::unique_ptr<Backend>>& backends,
                       const std::vector<std::vector<Case>>& plans);

}  // namespace cb
