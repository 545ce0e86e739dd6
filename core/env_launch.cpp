#include "core/env_launch.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/environment.hpp"

namespace cb {

namespace {

constexpr const char* kRequired[] = {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"};

// What torchrun and the Kubernetes operators set besides the required four.
constexpr const char* kOptional[] = {"LOCAL_RANK",
                                     "LOCAL_WORLD_SIZE",
                                     "GROUP_RANK",
                                     "GROUP_WORLD_SIZE",
                                     "ROLE_RANK",
                                     "ROLE_WORLD_SIZE",
                                     "ROLE_NAME",
                                     "TORCHELASTIC_RUN_ID",
                                     "TORCHELASTIC_RESTART_COUNT",
                                     "TORCHELASTIC_MAX_RESTARTS",
                                     "TORCHELASTIC_USE_AGENT_STORE"};

const char* set_value(const EnvLookup& get, const char* name) {
  const char* v = get(name);
  return v && *v ? v : nullptr;
}

std::optional<long> parse_integer(std::string_view text) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Reads `name` as an integer in [lo, hi]; on failure sets `problem`.
int integer(const EnvLookup& get, const char* name, long lo, long hi, std::string& problem) {
  const char* text = set_value(get, name);
  if (!text || !problem.empty()) return 0;
  auto v = parse_integer(text);
  if (!v || *v < lo || *v > hi) {
    problem = fmt::format("{}='{}' is not an integer from {} to {}", name, text, lo, hi);
    return 0;
  }
  return static_cast<int>(*v);
}

// MASTER_ADDR and the port rank 0 serves on, read before anything else: a process whose other
// variables are wrong still tells rank 0 there. On a problem the port stays 0 (no one is told).
std::string read_rendezvous_address(const EnvLookup& get, EnvLaunch& out) {
  if (const char* addr = set_value(get, "MASTER_ADDR")) out.master_addr = addr;
  std::string problem;
  const int port = integer(get, "MASTER_PORT", 1, 65535, problem);
  if (!problem.empty()) return "env:// launch: " + problem;
  if (port == 0) return {};  // not set: said with the other missing variables
  // torchrun's static rendezvous (--master-addr/--master-port) keeps MASTER_PORT for its
  // agent's own store and tells the workers to use that store, a protocol commbench does not
  // speak: rank 0 serves on the next port instead.
  if (const char* agent = set_value(get, "TORCHELASTIC_USE_AGENT_STORE");
      agent && (std::string_view(agent) == "True" || std::string_view(agent) == "1")) {
    if (port == 65535) {
      return "env:// launch: MASTER_PORT 65535 is torchrun's own store "
             "(TORCHELASTIC_USE_AGENT_STORE=True) and commbench's rank 0 serves on the next port: "
             "give torchrun a --master-port below 65535";
    }
    out.master_port = port + 1;
  } else {
    out.master_port = port;
  }
  return {};
}

}  // namespace

const char* process_env(const char* name) { return std::getenv(name); }

bool env_launch_requested(const EnvLookup& get) {
  return set_value(get, "RANK") || set_value(get, "WORLD_SIZE");
}

std::string read_env_launch(const EnvLookup& get, EnvLaunch& out) {
  const std::string address_problem = read_rendezvous_address(get, out);
  std::string missing;
  for (const char* name : kRequired) {
    if (!set_value(get, name)) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", name);
  }
  if (!missing.empty()) {
    return fmt::format(
        "env:// launch: without {}: MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE are all needed "
        "once RANK or WORLD_SIZE is set",
        missing);
  }
  if (!address_problem.empty()) return address_problem;
  constexpr long kMaxRanks = 1L << 24;
  std::string problem;
  out.world_size = integer(get, "WORLD_SIZE", 1, kMaxRanks, problem);
  out.rank = integer(get, "RANK", 0, kMaxRanks, problem);
  out.local_rank = integer(get, "LOCAL_RANK", 0, kMaxRanks, problem);
  out.local_world_size = integer(get, "LOCAL_WORLD_SIZE", 1, kMaxRanks, problem);
  if (!problem.empty()) return "env:// launch: " + problem;
  if (out.rank >= out.world_size) {
    return fmt::format("env:// launch: RANK {} is not below WORLD_SIZE {} (ranks are 0 to {})",
                       out.rank, out.world_size, out.world_size - 1);
  }
  if (out.local_world_size > 0) {
    if (out.local_rank >= out.local_world_size) {
      return fmt::format("env:// launch: LOCAL_RANK {} is not below LOCAL_WORLD_SIZE {}",
                         out.local_rank, out.local_world_size);
    }
    if (out.local_world_size > out.world_size) {
      return fmt::format("env:// launch: LOCAL_WORLD_SIZE {} is larger than WORLD_SIZE {}",
                         out.local_world_size, out.world_size);
    }
  }
  return {};
}

std::map<std::string, std::string> env_launch_variables(const EnvLookup& get) {
  std::map<std::string, std::string> out;
  auto add = [&](const char* name) {
    if (const char* v = set_value(get, name); v && !secret_name(name)) out[name] = v;
  };
  for (const char* name : kRequired) add(name);
  for (const char* name : kOptional) add(name);
  return out;
}

}  // namespace cb
