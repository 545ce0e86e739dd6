// A subcommand's flags as a table: one row per flag, with its names and help for the command line,
// the request field it fills and, where the subcommand has a typed plan (run's), how the value
// becomes part of it. Every subcommand registers its rows through one function (cmd/flags.hpp),
// so that a rule for every flag is written once, there; run's rows also build the command line of
// a fresh job (run_arguments).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cb {

template <class Request, class Plan = Request>
struct Flag {
  // As CLI11 takes them: "-c,--collectives", "--check,!--no-check"; a name without a dash is a
  // positional argument ("FILES").
  std::string names;
  std::string help;
  // The request field it fills, exactly one of: one value, an on/off switch, a repeatable value
  // (or the positional arguments).
  std::function<std::string&(Request&)> text = {};
  bool Request::*toggle = nullptr;
  std::vector<std::string> Request::*list = nullptr;
  bool required = false;
  int min_values = 0;         // a list: at least this many values (2: BASE... NEW)
  bool one_per_name = false;  // a list: one value each time it is named (the rest are positional)
  // Why a value is refused as the command line is read, empty when it is not; `refused_what`
  // names what is expected in --help ("PREFIX").
  std::function<std::string(const std::string&)> refuse = {};
  std::string refused_what = {};
  // How the value becomes part of the plan, checked (a usage Error naming the flag when it is
  // not good); empty where the plan reads it together with others, or has none.
  std::function<void(Plan&, const Request&)> read = {};
  bool relaunched = true;  // run's: a fresh job of a sweep is given it again

  // "--collectives", "--check"; a positional's name.
  std::string long_name() const {
    const auto start = names.find("--");
    if (start == std::string::npos) return names;
    return names.substr(start, names.find(',', start) - start);
  }
};

template <class Request, class Plan = Request>
using Flags = std::vector<Flag<Request, Plan>>;

// A row that fills `field` with one value.
template <class Request>
Flag<Request> value_flag(std::string names, std::string Request::*field, std::string help) {
  Flag<Request> f;
  f.names = std::move(names);
  f.help = std::move(help);
  f.text = [field](Request& r) -> std::string& { return r.*field; };
  return f;
}

// A row that turns `field` on (and, named "--NAME,!--no-NAME", off).
template <class Request>
Flag<Request> toggle_flag(std::string names, bool Request::*field, std::string help) {
  Flag<Request> f;
  f.names = std::move(names);
  f.help = std::move(help);
  f.toggle = field;
  return f;
}

// A row that appends each value given to `field`.
template <class Request>
Flag<Request> list_flag(std::string names, std::vector<std::string> Request::*field,
                        std::string help) {
  Flag<Request> f;
  f.names = std::move(names);
  f.help = std::move(help);
  f.list = field;
  return f;
}

// A repeatable row that takes one value each time it is named, leaving what follows to the
// positional arguments.
template <class Request>
Flag<Request> one_each_flag(std::string names, std::vector<std::string> Request::*field,
                            std::string help) {
  Flag<Request> f = list_flag(std::move(names), field, std::move(help));
  f.one_per_name = true;
  return f;
}

// `f`, which must be given; a list of at least `at_least` values.
template <class Request, class Plan>
Flag<Request, Plan> required(Flag<Request, Plan> f, int at_least = 0) {
  f.required = true;
  f.min_values = at_least;
  return f;
}

}  // namespace cb
