#include "app/list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <map>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/error.hpp"
#include "common/text_table.hpp"

namespace cb {

namespace {

std::vector<std::string> chosen_backends(const ListRequest& rq) {
  std::vector<std::string> out;
  if (rq.backends.empty()) {
    for (const auto& e : backend_registry()) out.push_back(e.name);
    return out;
  }
  for (const auto& n : split_list(rq.backends)) {
    if (!find_backend(n))
      usage_error("unknown backend '{}': this build offers {}", n, backend_names());
    out.push_back(n);
  }
  return out;
}

// Creates the backends that can run here; the others are reported by name and reason.
template <typename Fn>
void with_backends(const ListRequest& rq, Fn fn) {
  BackendOptions bo;
  bo.launch = detect_launch();
  for (const auto& name : chosen_backends(rq)) {
    const BackendEntry* e = find_backend(name);
    // A backend named with -B reports its usage errors; the others are only described.
    std::string why = rq.backends.empty() ? why_unavailable(*e, bo) : e->unavailable_reason(bo);
    if (!why.empty()) {
      std::cout << fmt::format("# {}: unavailable here: {}\n", name, why);
      continue;
    }
    auto b = e->create(bo);
    fn(*b);
  }
}

TextTable left_aligned(std::vector<std::string> header) {
  TextTable t;
  const std::size_t n = header.size();
  t.set_header(std::move(header), std::vector<TextTable::Align>(n, TextTable::Align::Left));
  return t;
}

int list_collectives(const ListRequest& rq) {
  auto colls = parse_collectives(rq.collectives);
  if (rq.backends.empty()) {
    TextTable t = left_aligned({"collective", "aliases", "reduces", "rooted", "busbw factor"});
    for (Collective c : colls) {
      const auto& i = info(c);
      std::string aliases = fmt::format("{}", fmt::join(i.aliases, ", "));
      static const char* kFactor[] = {"2(n-1)/n", "(n-1)/n", "1", "-"};
      t.add_row({std::string(i.name), aliases.empty() ? "-" : aliases, i.reduces ? "yes" : "no",
                 i.rooted ? "yes" : "no", kFactor[static_cast<int>(i.bus)]});
    }
    t.print(std::cout);
    return 0;
  }
  with_backends(rq, [&](Backend& b) {
    TextTable t = left_aligned({"backend", "collective", "implementation"});
    for (Collective c : colls) t.add_row({b.name(), std::string(name(c)), b.implementation(c)});
    t.print(std::cout);
  });
  return 0;
}

int list_backends(const ListRequest&) {
  TextTable t = left_aligned({"backend", "status", "description"});
  BackendOptions bo;
  bo.launch = detect_launch();
  for (const auto& e : backend_registry()) {
    std::string why = why_unavailable(e, bo);
    t.add_row({e.name, why.empty() ? "available" : "unavailable: " + why, e.description});
  }
  t.print(std::cout);
  return 0;
}

int list_dtypes(const ListRequest& rq) {
  std::map<std::string, std::vector<std::string>> offered;  // dtype -> backends offering it
  with_backends(rq, [&](Backend& b) {
    for (const auto& d : all_dtypes()) {
      if (b.supports(d.type)) offered[std::string(d.name)].push_back(b.name());
    }
  });
  TextTable t = left_aligned({"dtype", "bytes", "backends"});
  for (const auto& d : all_dtypes()) {
    auto it = offered.find(std::string(d.name));
    t.add_row({std::string(d.name), std::to_string(d.size),
               it == offered.end() ? "-" : fmt::format("{}", fmt::join(it->second, ", "))});
  }
  t.print(std::cout);
  return 0;
}

int list_algorithms(const ListRequest& rq) {
  auto colls = parse_collectives(rq.collectives);
  with_backends(rq, [&](Backend& b) {
    TextTable t = left_aligned({"backend", "collective", "algorithms"});
    for (Collective c : colls) {
      if (!b.supports(c)) continue;
      std::string names = "default";
      for (const auto& a : b.algorithms(c)) names += ", " + a;
      t.add_row({b.name(), std::string(name(c)), names});
    }
    t.print(std::cout);
  });
  return 0;
}

}  // namespace

const Flags<ListRequest>& list_flags() {
  using L = ListRequest;
  static const Flags<L> flags = {
      required(value_flag("what", &L::what, "collectives, backends, algorithms or dtypes")),
      value_flag("-B,--backends", &L::backends, "only these backends"),
      value_flag("-c,--collectives", &L::collectives, "only these collectives")};
  return flags;
}

int list(const ListRequest& rq) {
  static const std::map<std::string, int (*)(const ListRequest&)> kLists = {
      {"collectives", list_collectives},
      {"backends", list_backends},
      {"algorithms", list_algorithms},
      {"dtypes", list_dtypes},
  };
  auto it = kLists.find(rq.what);
  if (it == kLists.end()) {
    usage_error("unknown list '{}': expected collectives, backends, algorithms or dtypes", rq.what);
  }
  return it->second(rq);
}

}  // namespace cb
