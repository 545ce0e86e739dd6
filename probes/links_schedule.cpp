#include "probes/links_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace cb {

std::vector<LinkRound> tournament_rounds(int n) {
  std::vector<LinkRound> rounds;
  if (n < 2) return rounds;
  // Circle method: participant m-1 stays put, the others rotate one place per round. With odd
  // n, the extra slot m-1 is the bye.
  const int m = n % 2 ? n + 1 : n;
  for (int r = 0; r < m - 1; ++r) {
    LinkRound round;
    auto at = [&](int i) { return i == m - 1 ? m - 1 : (r + i) % (m - 1); };
    for (int i = 0; i < m / 2; ++i) {
      int a = at(i), b = at(m - 1 - i);
      if (a >= n || b >= n) continue;  // the bye
      round.push_back({std::min(a, b), std::max(a, b)});
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<LinkRound> sampled_rounds(int n, int k, std::uint64_t seed) {
  std::vector<LinkRound> rounds = tournament_rounds(n);
  if (k >= static_cast<int>(rounds.size())) return rounds;
  std::mt19937_64 rng(seed);
  std::vector<int> label(static_cast<std::size_t>(n));
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), rng);
  std::shuffle(rounds.begin(), rounds.end(), rng);
  rounds.resize(static_cast<std::size_t>(std::max(k, 0)));
  for (auto& round : rounds) {
    for (auto& p : round) {
      int a = label[static_cast<std::size_t>(p.a)], b = label[static_cast<std::size_t>(p.b)];
      p = {std::min(a, b), std::max(a, b)};
    }
  }
  return rounds;
}

int partner_in(const LinkRound& round, int p) {
  for (const auto& pair : round) {
    if (pair.a == p) return pair.b;
    if (pair.b == p) return pair.a;
  }
  return -1;
}

}  // namespace cb
