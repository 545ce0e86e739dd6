#include "collectives/catalogue/moe_router.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace cb {

namespace {

// SplitMix64's finaliser: spreads the seed and the rank over the generator's seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// |N(0,1)| deviates by Box-Muller from a generator fixed by the standard.
class AbsNormal {
 public:
  explicit AbsNormal(std::uint64_t seed) : gen_(seed) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - static_cast<double>(gen_() >> 11) * 0x1.0p-53;  // (0, 1]
    const double u2 = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * 3.14159265358979323846 * u2;
    spare_ = std::fabs(r * std::sin(theta));
    has_spare_ = true;
    return std::fabs(r * std::cos(theta));
  }

 private:
  std::mt19937_64 gen_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Indices of the `k` largest of `v` among those `allowed`, highest first, ties to the lower index.
void top_k(const std::vector<double>& v, const std::vector<char>& allowed, int k,
           std::vector<int>& out, std::vector<int>& scratch) {
  scratch.clear();
  for (int i = 0; i < static_cast<int>(v.size()); ++i) {
    if (allowed.empty() || allowed[static_cast<std::size_t>(i)]) scratch.push_back(i);
  }
  const auto better = [&](int a, int b) {
    return v[static_cast<std::size_t>(a)] > v[static_cast<std::size_t>(b)] ||
           (v[static_cast<std::size_t>(a)] == v[static_cast<std::size_t>(b)] && a < b);
  };
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(k), scratch.size());
  std::partial_sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n),
                    scratch.end(), better);
  out.assign(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

MoeRoute route_tokens(const MoeRouting& m, int nranks, std::uint64_t tokens, std::uint64_t seed) {
  MoeRoute route;
  route.nranks = nranks;
  const auto n = static_cast<std::size_t>(nranks);
  route.copies.assign(n * n, 0);
  const int e_count = m.experts;
  const int per_rank = e_count / nranks;
  const bool limited = m.groups > 0 && m.groups < nranks;
  // Per expert, the copies one rank may send it (none: no limit).
  const double fair = static_cast<double>(tokens) * m.topk / e_count;
  const std::uint64_t capacity =
      m.capacity > 0 ? static_cast<std::uint64_t>(std::ceil(m.capacity * fair)) : tokens;

  std::vector<double> scores(static_cast<std::size_t>(e_count));
  std::vector<double> rank_best(n);
  std::vector<char> allowed;
  std::vector<int> chosen, ranks, scratch;
  std::vector<std::uint64_t> load(static_cast<std::size_t>(e_count));
  for (int from = 0; from < nranks; ++from) {
    AbsNormal normal(mix(seed) ^ mix(static_cast<std::uint64_t>(from) + 1));
    std::fill(load.begin(), load.end(), 0);
    for (std::uint64_t t = 0; t < tokens; ++t) {
      for (auto& s : scores) s = normal.next() + 1.0;
      allowed.clear();
      if (limited) {
        for (std::size_t r = 0; r < n; ++r) {
          const auto first = scores.begin() + static_cast<std::ptrdiff_t>(r) * per_rank;
          rank_best[r] = *std::max_element(first, first + per_rank);
        }
        top_k(rank_best, {}, m.groups, ranks, scratch);
        allowed.assign(scores.size(), 0);
        for (int r : ranks) {
          std::fill_n(allowed.begin() + static_cast<std::ptrdiff_t>(r) * per_rank, per_rank, 1);
        }
      }
      top_k(scores, allowed, m.topk, chosen, scratch);
      for (int e : chosen) {
        ++route.routed;
        if (load[static_cast<std::size_t>(e)] >= capacity) {
          ++route.dropped;
          continue;
        }
        ++load[static_cast<std::size_t>(e)];
        ++route.copies[static_cast<std::size_t>(from) * n + static_cast<std::size_t>(e / per_rank)];
      }
    }
  }
  return route;
}

}  // namespace cb
