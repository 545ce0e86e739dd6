#include "report/launch_statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cb {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < 1e-15) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) {
    if (std::isfinite(x)) out.push_back(x);
  }
  return out;
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
  double lo = 0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

WelchInterval welch_interval(const std::vector<double>& reference,
                             const std::vector<double>& candidate, double confidence) {
  WelchInterval w;
  const double n = static_cast<double>(reference.size()), m = static_cast<double>(candidate.size());
  w.difference = mean_of(candidate) - mean_of(reference);
  const double sr = stddev_of(reference), sc = stddev_of(candidate);
  const double vr = sr * sr / n, vc = sc * sc / m;
  w.se = std::sqrt(vr + vc);
  w.low = w.high = w.difference;
  if (w.se <= 0) return w;
  w.df = (vr + vc) * (vr + vc) / (vr * vr / (n - 1) + vc * vc / (m - 1));
  const double t = student_t_quantile(1 - (1 - confidence) / 2, w.df);
  w.low = w.difference - t * w.se;
  w.high = w.difference + t * w.se;
  return w;
}

GeometricInterval geometric_interval(const std::vector<double>& values, double confidence) {
  std::vector<double> logs;
  for (double v : values) {
    if (v > 0) logs.push_back(std::log(v));
  }
  GeometricInterval g;
  g.launches = static_cast<int>(logs.size());
  if (logs.empty()) return g;
  const double m = mean_of(logs);
  g.mean = g.low = g.high = std::exp(m);
  const double sd = stddev_of(logs);
  if (logs.size() < 2 || sd <= 0) return g;
  const double n = static_cast<double>(logs.size());
  const double half = student_t_quantile(1 - (1 - confidence) / 2, n - 1) * sd / std::sqrt(n);
  g.low = std::exp(m - half);
  g.high = std::exp(m + half);
  return g;
}

const char* change_name(Change c) {
  switch (c) {
    case Change::Slower:
      return "slower";
    case Change::Faster:
      return "faster";
    case Change::Same:
      return "same";
    case Change::Inconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

RatioVerdict judge_log_launches(const std::vector<double>& reference_logs,
                                const std::vector<double>& candidate_logs, const EffectRule& rule) {
  const std::vector<double> ref = finite(reference_logs), cand = finite(candidate_logs);
  RatioVerdict v;
  v.reference_launches = static_cast<int>(ref.size());
  v.candidate_launches = static_cast<int>(cand.size());
  if (ref.size() < 2 || cand.size() < 2) {
    v.why = fmt::format("{} v {} launches: a confidence bound needs at least 2 a side", ref.size(),
                        cand.size());
    return v;
  }
  const double each = 1 - (1 - rule.confidence) / std::max(rule.family, 1);
  const WelchInterval w = welch_interval(ref, cand, each);
  v.ratio = std::exp(w.difference);
  v.low = std::exp(w.low);
  v.high = std::exp(w.high);
  if (v.low > rule.floor) {
    v.change = Change::Slower;
  } else if (v.high < 1 / rule.floor) {
    v.change = Change::Faster;
  } else {
    v.change = Change::Same;
  }
  return v;
}

RatioVerdict judge_launches(const std::vector<double>& reference,
                            const std::vector<double>& candidate, const EffectRule& rule) {
  auto logs = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (double x : v) out.push_back(x > 0 ? std::log(x) : kNaN);
    return out;
  };
  RatioVerdict v = judge_log_launches(logs(reference), logs(candidate), rule);
  if (v.change != Change::Inconclusive &&
      (v.reference_launches < static_cast<int>(reference.size()) ||
       v.candidate_launches < static_cast<int>(candidate.size()))) {
    v.change = Change::Inconclusive;
    v.why = "a figure that is not positive";
  }
  return v;
}

LogTable shape_of(const LogTable& launches) {
  LogTable out = launches;
  for (auto& row : out) {
    const double centre = median_of(finite(row));
    for (double& x : row) x -= centre;  // NaN stays NaN
  }
  return out;
}

std::vector<double> level_of(const LogTable& launches) {
  std::vector<double> out;
  for (const auto& row : launches) {
    const bool whole = !row.empty() && finite(row).size() == row.size();
    out.push_back(whole ? mean_of(row) : kNaN);
  }
  return out;
}

namespace {

struct Gathered {
  std::vector<std::size_t> reference, candidate;
};

// Launches whose figures lie within [pp, pp x tol_pp] and [cu, cu x tol_cu].
Gathered within(const std::vector<ControlFigures>& ref, const std::vector<ControlFigures>& cand,
                double pp, double cu, double tol_pp, double tol_cu) {
  Gathered g;
  auto in = [&](const ControlFigures& c) {
    return c.known() && c.pingpong_ns >= pp && c.pingpong_ns <= pp * tol_pp && c.compute_us >= cu &&
           c.compute_us <= cu * tol_cu;
  };
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (in(ref[i])) g.reference.push_back(i);
  }
  for (std::size_t i = 0; i < cand.size(); ++i) {
    if (in(cand[i])) g.candidate.push_back(i);
  }
  return g;
}

// Why the sides' controls do not agree: the candidate's launches against the reference's median.
std::string disagreement(const std::vector<ControlFigures>& ref,
                         const std::vector<ControlFigures>& cand, double tol_pp, double tol_cu,
                         int needed) {
  std::vector<double> rpp, rcu;
  for (const auto& c : ref) {
    if (c.known()) rpp.push_back(c.pingpong_ns), rcu.push_back(c.compute_us);
  }
  const double mpp = median_of(rpp), mcu = median_of(rcu);
  int off = 0;
  std::vector<double> cpp, ccu;
  for (const auto& c : cand) {
    if (!c.known()) continue;
    cpp.push_back(c.pingpong_ns);
    ccu.push_back(c.compute_us);
    const double fp = c.pingpong_ns / mpp, fc = c.compute_us / mcu;
    if (fp > tol_pp || fp < 1 / tol_pp || fc > tol_cu || fc < 1 / tol_cu) ++off;
  }
  const double fpp = median_of(cpp) / mpp, fcu = median_of(ccu) / mcu;
  std::string need = fmt::format(
      "need {} launches a side whose control agrees (round trip within {:g}x, compute within "
      "{:g}x) -- rerun both sides while the machine holds one mode",
      needed, tol_pp, tol_cu);
  if (off == 0) {
    return fmt::format(
        "the base side's control is spread over two modes (core-to-core round trip {:.0f}-{:.0f} "
        "ns); {}",
        *std::min_element(rpp.begin(), rpp.end()), *std::max_element(rpp.begin(), rpp.end()), need);
  }
  const bool slower = std::max(fpp, fcu) >= 1 / std::min(fpp, fcu);
  const double factor = slower ? std::max(fpp, fcu) : 1 / std::min(fpp, fcu);
  return fmt::format(
      "new side's control {:.1f}x {} in {} of {} launches (core-to-core round trip {:.0f} ns "
      "against {:.0f} ns, compute loop {:.0f} us against {:.0f} us); {}",
      factor, slower ? "slower" : "faster", off, cpp.size(), median_of(cpp), mpp, median_of(ccu),
      mcu, need);
}

}  // namespace

ControlMatch match_control(const std::vector<ControlFigures>& reference,
                           const std::vector<ControlFigures>& candidate, double pingpong_tolerance,
                           double compute_tolerance, int needed) {
  ControlMatch best;
  std::vector<double> pps, cus;
  for (const auto* side : {&reference, &candidate}) {
    for (const auto& c : *side) {
      if (c.known()) pps.push_back(c.pingpong_ns), cus.push_back(c.compute_us);
    }
  }
  auto score = [](const Gathered& g) {
    return std::make_pair(std::min(g.reference.size(), g.candidate.size()),
                          g.reference.size() + g.candidate.size());
  };
  Gathered top;
  for (double pp : pps) {
    for (double cu : cus) {
      Gathered g = within(reference, candidate, pp, cu, pingpong_tolerance, compute_tolerance);
      if (score(g) > score(top)) top = std::move(g);
    }
  }
  const auto need_ref = std::min<std::size_t>(needed, reference.size());
  const auto need_cand = std::min<std::size_t>(needed, candidate.size());
  best.reference = top.reference;
  best.candidate = top.candidate;
  best.matched = top.reference.size() >= need_ref && top.candidate.size() >= need_cand &&
                 !top.reference.empty() && !top.candidate.empty();
  if (!best.matched) {
    best.why = disagreement(reference, candidate, pingpong_tolerance, compute_tolerance, needed);
  }
  return best;
}

double history_threshold(const std::vector<double>& nightly_logs) {
  if (static_cast<int>(nightly_logs.size()) < kHistoryNights) return 0;
  std::vector<double> deltas;
  for (std::size_t i = 1; i < nightly_logs.size(); ++i) {
    deltas.push_back(std::abs(nightly_logs[i] - nightly_logs[i - 1]));
  }
  const double q1 = quantile_of(deltas, 0.25), q3 = quantile_of(deltas, 0.75);
  return std::exp(q3 + 3 * (q3 - q1));
}

}  // namespace cb
