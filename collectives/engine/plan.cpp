#include "collectives/engine/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>

#include "collectives/catalogue/moe_router.hpp"
#include "collectives/engine/memory_check.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

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

namespace {

// The router's scores a moe case may draw: about 5 s of this process's time per matrix.
constexpr std::uint64_t kMaxRouterDraws = 250'000'000;

// The splits of an alltoallv plan, each checked against the rank count.
std::vector<std::shared_ptr<const SplitSpec>> checked_splits(const SplitSettings& settings,
                                                             int nranks) {
  std::vector<std::shared_ptr<const SplitSpec>> out;
  for (const auto& s : settings.splits) {
    if (std::string why = split_unfit(s, nranks); !why.empty()) {
      usage_error("--split {}: {}", split_name(s), why);
    }
    out.push_back(std::make_shared<const SplitSpec>(s));
  }
  return out;
}

// One alltoallv case per split and size (a matrix split: once, at the file's sizes), each with
// its matrix's figures; sizes too small to move an element, or that move what the previous size
// did, are left out.
void add_alltoallv_cases(const Case& shape, const SweepOptions& o,
                         const std::vector<std::uint64_t>& sizes, int nranks,
                         const std::vector<std::shared_ptr<const SplitSpec>>& splits,
                         std::vector<Case>& cases) {
  const std::uint64_t es = info(shape.dtype).size;
  for (const auto& split : splits) {
    std::uint64_t previous = 0;
    const bool from_file = split->kind == SplitKind::Matrix;
    for (std::uint64_t size : from_file ? std::vector<std::uint64_t>{0} : sizes) {
      const std::uint64_t elements = size / es;
      if (split->kind == SplitKind::Moe) {
        const std::uint64_t tokens =
            elements / (static_cast<std::uint64_t>(split->moe.topk) * split->moe_hidden);
        if (router_draws(split->moe, nranks, tokens) > kMaxRouterDraws) {
          usage_error(
              "--split {}: {} tokens per rank at {} would make the router draw more than {} "
              "scores per matrix; raise --moe-hidden or lower --max-bytes",
              split_name(*split), tokens, format_size(size), kMaxRouterDraws);
        }
      }
      Case c = shape;
      c.split = split;
      c.split_elements = elements;
      c.traffic = traffic_figures(case_traffic(c, nranks));
      if (c.traffic.total == 0 || c.traffic.total == previous) continue;
      previous = c.traffic.total;
      c.count = c.traffic.total / static_cast<std::uint64_t>(nranks);
      c.bytes = c.traffic.total * es / static_cast<std::uint64_t>(nranks);
      for (Placement p : o.placements) {
        c.placement = p;
        cases.push_back(c);
      }
    }
  }
}

}  // namespace

Traffic case_traffic(const Case& c, int nranks) {
  Traffic t = split_traffic(*c.split, nranks, c.split_elements, info(c.dtype).size);
  if (c.uniform_twin) t = uniform_like(t, c.placement == Placement::In);
  return t;
}

bool has_twin(const Case& c) {
  return c.split && c.split->kind != SplitKind::Uniform && !c.uniform_twin;
}

Case uniform_twin(const Case& c, int nranks) {
  Case twin = c;
  twin.uniform_twin = true;
  twin.traffic = traffic_figures(case_traffic(twin, nranks));
  twin.count = twin.traffic.total / static_cast<std::uint64_t>(nranks);
  twin.bytes = twin.traffic.total * info(c.dtype).size / static_cast<std::uint64_t>(nranks);
  return twin;
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
    if (c == Collective::AllToAllV && sizes.size() > 1) {
      for (const auto& s : o.split.splits) {
        if (s.kind == SplitKind::Matrix) {
          note(
              fmt::format("{}: alltoallv {}: the file sets every pair's bytes; the size sweep "
                          "does not apply",
                          b, split_name(s)));
        }
      }
    }
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
            if (c == Collective::AllToAllV) {
              add_alltoallv_cases({c, algo, t, op, root, 0, 0, Placement::Out}, o, sizes, nranks,
                                  checked_splits(o.split, nranks), cases);
              continue;
            }
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

void share_split_matrices(Control& control, SplitSettings& splits) {
  for (auto& s : splits.splits) {
    if (s.kind != SplitKind::Matrix) continue;
    std::string mine;
    if (control.rank() == 0) {
      try {
        SplitSpec check = s;
        const std::string text = read_matrix_file(s.path);
        parse_matrix_text(text, s.path, check);
        mine = "+" + text;
      } catch (const Error& e) {
        mine = "-" + std::string(e.what());
      }
    }
    const std::string root = control.allgather(mine).front();
    if (root.empty() || root.front() == '-') usage_error("{}", root.empty() ? "" : root.substr(1));
    parse_matrix_text(root.substr(1), s.path, s);
  }
}

nlohmann::json split_meta(const SweepOptions& sweep, const std::vector<std::vector<Case>>& plans) {
  bool any = false;
  for (const auto& plan : plans) {
    any = any || std::any_of(plan.begin(), plan.end(), [](const Case& c) { return c.split; });
  }
  if (!any) return nullptr;
  nlohmann::json names = nlohmann::json::array();
  for (const auto& s : sweep.split.splits) names.push_back(split_name(s));
  return {{"splits", names}, {"seed", sweep.split.seed}, {"moe_hidden", sweep.split.moe_hidden}};
}

BufferNeeds buffer_needs(const std::vector<Case>& cases, int nranks) {
  BufferNeeds need;
  for (const auto& c : cases) {
    const auto& ci = info(c.collective);
    std::uint64_t es = info(c.dtype).size;
    if (c.split) {  // its uniform twin never needs more (uniform_like)
      if (c.placement == Placement::Out) {
        need.send = std::max(need.send, c.traffic.max_send * es);
        need.recv = std::max(need.recv, c.traffic.max_recv * es);
      } else {
        need.recv = std::max(need.recv, c.traffic.largest() * es);
      }
      continue;
    }
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
