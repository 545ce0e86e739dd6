#include "collectives/backends/mpi/mpi_algorithm_select.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <regex>

#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "common/error.hpp"

namespace cb::mpi {

namespace {

constexpr std::size_t kCollectives = 11;

std::size_t slot(Collective c) {
  return static_cast<std::size_t>(c);
}

// One MPI_T control variable with an allocated handle.
struct Cvar {
  int index = -1;
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  int count = 0;
  explicit operator bool() const { return handle != MPI_T_CVAR_HANDLE_NULL; }
};

bool mpit_ready() {
  static const bool ok = [] {
    int provided = 0;
    return MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
  }();
  return ok;
}

Cvar find_cvar(const std::string& name) {
  Cvar v;
  if (name.empty() || !mpit_ready()) return v;
  if (MPI_T_cvar_get_index(name.c_str(), &v.index) != MPI_SUCCESS) return v;
  char buf[256];
  int len = sizeof(buf), verbosity = 0, bind = 0, scope = 0;
  int dlen = 0;
  if (MPI_T_cvar_get_info(v.index, buf, &len, &verbosity, &v.type, &v.enumtype, nullptr, &dlen,
                          &bind, &scope) != MPI_SUCCESS) {
    return v;
  }
  if (bind != MPI_T_BIND_NO_OBJECT) return v;
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  if (MPI_T_cvar_handle_alloc(v.index, nullptr, &h, &v.count) == MPI_SUCCESS) v.handle = h;
  return v;
}

std::optional<int> read_int(const Cvar& v) {
  if (!v || v.type != MPI_INT || v.count != 1) return std::nullopt;
  int value = 0;
  if (MPI_T_cvar_read(v.handle, &value) != MPI_SUCCESS) return std::nullopt;
  return value;
}

bool write_int(const Cvar& v, int value) {
  return v && v.type == MPI_INT && MPI_T_cvar_write(v.handle, &value) == MPI_SUCCESS;
}

// A boolean control variable (Open MPI registers them with a C bool type).
std::optional<bool> read_flag(const Cvar& v) {
  if (!v || v.count != 1) return std::nullopt;
  std::array<unsigned char, 16> raw{};
  if (MPI_T_cvar_read(v.handle, raw.data()) != MPI_SUCCESS) return std::nullopt;
  for (unsigned char b : raw) {
    if (b) return true;
  }
  return false;
}

std::string read_string(const Cvar& v) {
  if (!v || v.type != MPI_CHAR || v.count <= 0) return {};
  std::string s(static_cast<std::size_t>(v.count) + 1, '\0');
  if (MPI_T_cvar_read(v.handle, s.data()) != MPI_SUCCESS) return {};
  s.resize(s.find('\0'));
  return s;
}

// Open MPI: names from the variable's MPI_T enum, by value 1..n ("ignore" = 0 left out).
std::vector<std::string> enum_names(const Cvar& v) {
  std::vector<std::string> names;
  if (v.enumtype == MPI_T_ENUM_NULL) return names;
  int num = 0, len = 256;
  char buf[256];
  if (MPI_T_enum_get_info(v.enumtype, &num, buf, &len) != MPI_SUCCESS) return names;
  std::vector<std::pair<int, std::string>> items;
  for (int i = 0; i < num; ++i) {
    int value = 0;
    len = sizeof(buf);
    if (MPI_T_enum_get_item(v.enumtype, i, &value, buf, &len) != MPI_SUCCESS) continue;
    if (value > 0) items.emplace_back(value, buf);
  }
  std::sort(items.begin(), items.end());
  for (int expect = 1; const auto& [value, name] : items) {
    if (value != expect++) break;  // positions must match values
    names.push_back(name);
  }
  return names;
}

// Process-wide state: the handles and, for MPICH, what each collective is set to now.
struct State {
  std::array<Cvar, kCollectives> algorithm;
  std::array<Cvar, kCollectives> device;
  std::array<Cvar, kCollectives> segment;   // Open MPI segment sizes
  std::array<int, kCollectives> initial{};  // value found at start
  std::array<int, kCollectives> initial_device{};
  std::array<int, kCollectives> current{};
  bool mpich_forced = false;  // something differs from `initial`
};

State& state() {
  static State s;
  return s;
}

bool mpich_minor_version_ok(const std::string& library) {
  std::smatch m;
  if (!std::regex_search(library, m, std::regex(R"(MPICH ([0-9]+)\.([0-9]+))"))) return false;
  return m[1].str() == "4" && m[2].str() == "0";
}

// MPICH 4.0: the algorithm and device CVAR handles and their values at start, looked up once.
// False for other MPIs.
bool mpich_state_ready() {
  static const bool ready = [] {
    const std::string library = library_version();
    if (flavor_of(library) != MpiFlavor::Mpich || !mpich_minor_version_ok(library) ||
        !mpit_ready()) {
      return false;
    }
    State& st = state();
    for (const auto& ci : all_collectives()) {
      const std::size_t i = slot(ci.id);
      st.algorithm[i] = find_cvar(mpich_algorithm_variable(ci.id));
      st.device[i] = find_cvar(mpich_device_variable(ci.id));
      auto v = read_int(st.algorithm[i]);
      if (!v) continue;
      st.initial[i] = st.current[i] = *v;
      st.initial_device[i] = read_int(st.device[i]).value_or(1);
    }
    return true;
  }();
  return ready;
}

}  // namespace

void prepare_algorithm_environment() {
#ifdef OMPI_MAJOR_VERSION
  ::setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
#endif
}

AlgorithmSelector::AlgorithmSelector() {
  const std::string library = library_version();
  flavor_ = flavor_of(library);
  names_.resize(kCollectives);
  State& st = state();
  if (!mpit_ready()) {
    unavailable_ = "the MPI tool interface (MPI_T) does not initialise";
    return;
  }
  if (flavor_ == MpiFlavor::OpenMpi) {
    Cvar rules = find_cvar("coll_tuned_use_dynamic_rules");
    if (!rules) {
      unavailable_ = "Open MPI's coll/tuned component is not loaded";
      return;
    }
    if (!read_flag(rules).value_or(false)) {
      unavailable_ =
          "Open MPI ignores forced algorithms unless coll/tuned dynamic rules are on from the "
          "start (OMPI_MCA_coll_tuned_use_dynamic_rules=1 at launch)";
      return;
    }
    if (std::string file = read_string(find_cvar("coll_tuned_dynamic_rules_filename"));
        !file.empty()) {
      unavailable_ = "the coll/tuned rules file " + file +
                     " takes precedence over forced algorithms in Open MPI 4.1";
      return;
    }
    for (const auto& ci : all_collectives()) {
      const std::size_t i = slot(ci.id);
      st.algorithm[i] = find_cvar(ompi_algorithm_variable(ci.id));
      st.segment[i] = find_cvar(ompi_algorithm_variable(ci.id) + "_segmentsize");
      if (!st.algorithm[i]) continue;
      names_[i] = enum_names(st.algorithm[i]);
      if (names_[i].empty()) names_[i] = ompi_known_algorithms(ci.id);
    }
    return;
  }
  if (flavor_ == MpiFlavor::Mpich) {
    if (!mpich_minor_version_ok(library)) {
      unavailable_ = "algorithm positions are known for MPICH 4.0 only (this is " + library + ")";
      return;
    }
    // Never let MPICH quietly run another algorithm than the one forced: error (0).
    write_int(find_cvar("MPIR_CVAR_COLLECTIVE_FALLBACK"), 0);
    mpich_state_ready();
    for (const auto& ci : all_collectives()) {
      const std::size_t i = slot(ci.id);
      if (st.algorithm[i]) names_[i] = mpich_known_algorithms(ci.id);
    }
    return;
  }
  unavailable_ = "forcing algorithms is supported for Open MPI and MPICH only";
}

std::vector<std::string> AlgorithmSelector::algorithms(Collective c) const {
  if (!unavailable_.empty()) return {};
  return names_[slot(c)];
}

MPI_Comm AlgorithmSelector::duplicate_for(Collective c, const std::string& algorithm) {
  restore_default_algorithms();
  State& st = state();
  const std::size_t i = slot(c);
  std::optional<int> forced, forced_segment;
  std::optional<int> old_value, old_segment;
  if (flavor_ == MpiFlavor::OpenMpi && algorithm != "default") {
    const auto& names = names_[i];
    auto it = std::find(names.begin(), names.end(), algorithm);
    if (it == names.end()) runtime_error("Open MPI has no {} algorithm '{}'", name(c), algorithm);
    forced = static_cast<int>(it - names.begin()) + 1;
    old_value = read_int(st.algorithm[i]);
    if (!write_int(st.algorithm[i], *forced)) {
      runtime_error("cannot set {} through MPI_T", ompi_algorithm_variable(c));
    }
    if (c == Collective::AllReduce && algorithm == "segmented_ring") {
      old_segment = read_int(st.segment[i]);
      forced_segment = static_cast<int>(kOmpiSegmentedRingBytes);
      write_int(st.segment[i], *forced_segment);
    }
  }
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  // Later duplicates (the control channel's, other algorithms') keep their own choice.
  if (forced) write_int(st.algorithm[i], old_value.value_or(0));
  if (forced_segment) write_int(st.segment[i], old_segment.value_or(0));
  check(rc, "MPI_Comm_dup");
  return comm;
}

std::optional<MpichChoice> AlgorithmSelector::mpich_choice(Collective c,
                                                           const std::string& algorithm) const {
  if (flavor_ != MpiFlavor::Mpich || !unavailable_.empty()) return std::nullopt;
  const std::size_t i = slot(c);
  if (!state().algorithm[i]) return std::nullopt;
  if (algorithm == "default") return MpichChoice{c, state().initial[i]};
  auto v = mpich_algorithm_value(c, algorithm);
  if (!v) runtime_error("MPICH has no {} algorithm '{}'", name(c), algorithm);
  return MpichChoice{c, *v};
}

void activate(const MpichChoice& choice) {
  State& st = state();
  const std::size_t i = slot(choice.collective);
  if (st.current[i] == choice.value) return;
  if (!write_int(st.algorithm[i], choice.value)) {
    runtime_error("cannot set {} through MPI_T", mpich_algorithm_variable(choice.collective));
  }
  // A forced algorithm goes straight to MPIR's implementation, where the CVAR decides.
  write_int(st.device[i], choice.value == st.initial[i] ? st.initial_device[i] : 0);
  st.current[i] = choice.value;
  st.mpich_forced = true;
}

void restore_default_algorithms() {
  State& st = state();
  if (!st.mpich_forced) return;
  for (std::size_t i = 0; i < kCollectives; ++i) {
    if (st.current[i] == st.initial[i]) continue;
    write_int(st.algorithm[i], st.initial[i]);
    write_int(st.device[i], st.initial_device[i]);
    st.current[i] = st.initial[i];
  }
  st.mpich_forced = false;
}

ControlAlgorithms::ControlAlgorithms() {
  if (!mpich_state_ready()) return;
  State& st = state();
  for (std::size_t i = 0; i < kCollectives; ++i) {
    auto algorithm = read_int(st.algorithm[i]);
    auto device = read_int(st.device[i]);
    if (!algorithm || (*algorithm == 0 && device.value_or(1) == 1)) {
      saved_.emplace_back(-1, -1);
      continue;
    }
    saved_.emplace_back(*algorithm, device.value_or(-1));
    write_int(st.algorithm[i], 0);  // auto
    if (device) write_int(st.device[i], 1);
  }
}

ControlAlgorithms::~ControlAlgorithms() {
  State& st = state();
  for (std::size_t i = 0; i < saved_.size(); ++i) {
    auto [algorithm, device] = saved_[i];
    if (algorithm < 0) continue;
    write_int(st.algorithm[i], algorithm);
    if (device >= 0) write_int(st.device[i], device);
  }
}

}  // namespace cb::mpi
