// Forcing MPI collective algorithms inside one process, through MPI_T control variables.
//
// Open MPI 4.1 (coll/tuned): write coll_tuned_<coll>_algorithm, then MPI_Comm_dup; tuned reads
// the forced value when it enables the new communicator and keeps it for that communicator's
// lifetime, so each (collective, algorithm) gets its own duplicate. This needs
// coll_tuned_use_dynamic_rules=1 from the start (prepare_algorithm_environment() sets it
// before MPI_Init unless the user set it; the MPI re-execution sets it too).
//
// MPICH 4.0: MPIR_CVAR_<COLL>_INTRA_ALGORITHM is read at every call, so a communicator forcing
// an algorithm writes it right before its own calls (activate()), with the collective routed
// past the device layer (MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0) so the CVAR decides, and
// MPIR_CVAR_COLLECTIVE_FALLBACK=error so MPICH never substitutes another algorithm. The control
// channel's own collectives run MPICH's automatic choice (ControlAlgorithms), whatever a forced
// algorithm or the environment (`tune --env MPIR_CVAR_...`) set: a forced algorithm may refuse a
// control message's count.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/backends/mpi/mpi_algorithm_table.hpp"

namespace cb::mpi {

// Before MPI_Init: Open MPI dynamic rules on (unless the user chose), so algorithms can be
// forced later in the same process.
void prepare_algorithm_environment();

// An MPICH algorithm choice applied per call; see activate().
struct MpichChoice {
  Collective collective;
  int value;  // position in the CVAR's list (0 = auto)
};

class AlgorithmSelector {
 public:
  // MPI must be initialised.
  AlgorithmSelector();

  MpiFlavor flavor() const { return flavor_; }
  // Names that can be forced for `c` (empty when forcing is unavailable, see unavailable()).
  std::vector<std::string> algorithms(Collective c) const;
  // Why no algorithm can be forced here, or empty.
  const std::string& unavailable() const { return unavailable_; }

  // A new duplicate of MPI_COMM_WORLD for `c` running `algorithm` ("default" or a name from
  // algorithms(c)). For MPICH the choice is applied per call: see mpich_choice().
  MPI_Comm duplicate_for(Collective c, const std::string& algorithm);
  // The per-call choice for MPICH communicators ("default" restores the value found at start).
  std::optional<MpichChoice> mpich_choice(Collective c, const std::string& algorithm) const;

 private:
  MpiFlavor flavor_ = MpiFlavor::Other;
  std::string unavailable_;
  std::vector<std::vector<std::string>> names_;  // per collective
};

// MPICH: makes `choice` the algorithm for its collective (a no-op when it already is).
void activate(const MpichChoice& choice);
// MPICH: puts every algorithm forced by activate() back as found at start.
void restore_default_algorithms();

// MPICH: for its lifetime, every collective runs MPICH's automatic choice through the device
// layer; afterwards the values in force before come back. Nothing for other MPIs.
class ControlAlgorithms {
 public:
  ControlAlgorithms();
  ~ControlAlgorithms();
  ControlAlgorithms(const ControlAlgorithms&) = delete;
  ControlAlgorithms& operator=(const ControlAlgorithms&) = delete;

 private:
  std::vector<std::pair<int, int>> saved_;  // per collective: algorithm, device (-1: untouched)
};

}  // namespace cb::mpi
