#include "collectives/engine/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>

#include "collectives/engine/memory_check.hpp"
#include "common/error.hpp"

namespace cb {

std::vector<std::uint64_t> sweep_sizes(const SweepOptions& o) {
  if (o.min_bytes > o.max_bytes) {
    usage_error("--min-bytes ({}) is larger than --max-bytes ({})", o.min_bytes, o.max_bytes);
  }
  std::vector<std::uint64_t> out;
  if (o.step_bytes > 0) {
    for (std::uint64_t s = o.min_bytes; s <= o.max_bytes; s += o.step_bytes) {
      out.push_back(s);
      if (out.size() > 100000) usage_error("the size sweep has more than 100000 steps");
    }
    return out;
  }
  if (!(o.step_factor > 1.0)) usage_error("--step-factor must be larger than 1");
  double s = static_cast<double>(std::max<std::uint64_t>(o.min_bytes, 1));
  if (o.min_bytes == 0) out.push_back(0);
  while (s <= static_cast<double>(o.max_bytes) * (1 + 1e-12)) {
    std::uint64_t v = static_cast<std::uint64_t>(std::llround(s));
    if (out.empty() || out.back() != v) out.push_back(v);
    s *= o.step_factor;
  }
  return out;
}

static std::vector<std::string> algorithms_for(const Backend& b, Collective c,
                                               const std::vector<std::string>& requested) {
  std::vector<std::string> available = b.algorithms(c);
  std::vector<std::string> out;
  for (const auto& a : requested) {
    if (a == "all") {
      out.push_back("default");
      out.insert(out.end(), available.begin(), available.end());
    } else if (a == "default" ||
               std::find(available.begin(), available.end(), a) != available.end()) {
      out.push_back(a);
    }
  }
  std::vector<std::string> unique;
  for (const auto& a : out) {
    if (std::find(unique.begin(), unique.end(), a) == unique.end()) unique.push_back(a);
  }
  return unique;
}

std::vector<Case> plan_cases(const Backend& backend, const SweepOptions& o, int nranks,
                             std::vector<std::string>& notes) {
  if (o.root >= nranks && !o.all_roots) {
    usage_error("--root {} is out of range: there are {} ranks (roots 0..{})", o.root, nranks,
                nranks - 1);
  }
  const std::string b = backend.name();
  std::vector<std::uint64_t> sizes = sweep_sizes(o);
  std::vector<Case> cases;
  std::set<std::string> said;
  auto note = [&](std::string text) {
    if (said.insert(text).second) notes.push_back(std::move(text));
  };
  for (const auto& a : o.algorithms) {
    if (a == "default" || a == "all") continue;
    bool known = false;
    for (Collective c : o.collectives) {
      auto av = backend.algorithms(c);
      known = known || std::find(av.begin(), av.end(), a) != av.end();
    }
    if (!known) note(fmt::format("{}: no selected collective has algorithm '{}'", b, a));
  }
  for (Collective c : o.collectives) {
    const auto& ci = info(c);
    if (!backend.supports(c)) {
      note(fmt::format("{}: {} is not supported, skipped", b, ci.name));
      continue;
    }
    std::vector<std::string> algos = algorithms_for(backend, c, o.algorithms);
    std::vector<DType> dtypes =
        c == Collective::Barrier ? std::vector<DType>{DType::Float} : o.dtypes;
    std::vector<ReduceOp> ops = ci.reduces ? o.ops : std::vector<ReduceOp>{ReduceOp::None};
    std::vector<int> roots;
    if (!ci.rooted) {
      roots = {-1};
    } else if (o.all_roots) {
      for (int r = 0; r < nranks; ++r) roots.push_back(r);
    } else {
      roots = {o.root};
    }
    for (const auto& algo : algos) {
      for (DType t : dtypes) {
        if (c != Collective::Barrier && !backend.supports(t)) {
          note(fmt::format("{}: dtype {} is not supported, skipped", b, info(t).name));
          continue;
        }
        for (ReduceOp op : ops) {
          if (!backend.supports(c, op)) {
            note(fmt::format("{}: op {} is not supported for {}, skipped", b, name(op), ci.name));
            continue;
          }
          if (std::string why = backend.unsupported(t, op); !why.empty()) {
            note(fmt::format("{}: op {} on {} is not supported ({}), skipped", b, name(op),
                             info(t).name, why));
            continue;
          }
          for (int root : roots) {
            if (c == Collective::Barrier) {
              cases.push_back({c, algo, t, op, root, 0, 0, Placement::Out});
              continue;
            }
            for (std::uint64_t s : sizes) {
              std::uint64_t count = count_for_bytes(c, s, info(t).size, nranks);
              if (count == 0) continue;
              std::uint64_t bytes = reported_bytes(c, count, info(t).size, nranks);
              for (Placement p : o.placements)
                cases.push_back({c, algo, t, op, root, count, bytes, p});
            }
          }
        }
      }
    }
  }
  return cases;
}

BufferNeeds buffer_needs(const std::vector<Case>& cases, int nranks) {
  BufferNeeds need;
  for (const auto& c : cases) {
    const auto& ci = info(c.collective);
    std::uint64_t es = info(c.dtype).size;
    if (c.placement == Placement::Out) {
      need.send = std::max(need.send, elements(ci.send, c.count, nranks) * es);
      need.recv = std::max(need.recv, elements(ci.recv, c.count, nranks) * es);
    } else {
      need.recv = std::max(need.recv, in_place_elements(c.collective, c.count, nranks) * es);
    }
  }
  return need;
}

std::vector<std::vector<Case>> plan_backends(const std::vector<std::unique_ptr<Backend>>& backends,
                                             const SweepOptions& sweep, bool report) {
  const bool forced_algorithms = std::any_of(sweep.algorithms.begin(), sweep.algorithms.end(),
                                             [](const std::string& a) { return a != "default"; });
  for (auto& b : backends) {
    std::string why = forced_algorithms ? b->algorithms_unavailable() : std::string();
    if (report && !why.empty()) {
      std::cerr << "commbench: warning: " << b->name() << ": " << why << "; running default only\n";
    }
  }
  std::vector<std::vector<Case>> plans;
  std::vector<std::string> notes;
  std::size_t total = 0;
  for (auto& b : backends) {
    plans.push_back(plan_cases(*b, sweep, b->size(), notes));  // several GPUs per process
    total += plans.back().size();
  }
  if (report) {
    for (const auto& n : notes) std::cerr << "commbench: note: " << n << "\n";
  }
  if (total == 0) usage_error("nothing to run: no backend offers the requested combination");
  return plans;
}

void check_host_memory(Control& control, int ranks_here,
                       const std::vector<std::unique_ptr<Backend>>& backends,
                       const std::vector<std::vector<Case>>& plans) {
  BufferNeeds worst;  // backends run one after another: the largest one counts
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (backends[i]->memory().kind() != MemoryKind::Host) continue;
    BufferNeeds n = buffer_needs(plans[i], backends[i]->size());
    if (n.send + n.recv > worst.send + worst.recv) worst = n;
  }
  std::string mine =
      host_memory_shortfall(worst.send, worst.recv, ranks_here, available_host_memory());
  for (const auto& verdict : control.allgather(mine)) {
    if (!verdict.empty()) usage_error("{}", verdict);
  }
}

}  // namespace cb
