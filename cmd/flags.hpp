// Registers a subcommand's flag table (app/flags.hpp) on the command line: the one place every
// flag of every subcommand passes through.
#pragma once

#include <CLI/CLI.hpp>

#include "app/flags.hpp"

namespace cb {

template <class Request, class Plan>
void add_flags(CLI::App* cmd, const Flags<Request, Plan>& flags, Request& rq) {
  for (const auto& f : flags) {
    CLI::Option* o = f.toggle ? cmd->add_flag(f.names, rq.*f.toggle, f.help)
                     : f.list ? cmd->add_option(f.names, rq.*f.list, f.help)
                              : cmd->add_option(f.names, f.text(rq), f.help);
    if (f.required) o->required();
    if (f.min_values > 0) o->expected(f.min_values, -1);
    if (f.refuse) {
      o->check(CLI::Validator([refuse = f.refuse](std::string& value) { return refuse(value); },
                              f.refused_what));
    }
  }
}

}  // namespace cb
