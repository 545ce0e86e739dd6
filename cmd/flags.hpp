// Registers a subcommand's flag table (app/flags.hpp) on the command line: the one place every
// flag of every subcommand passes through; and a subcommand as its table plus one call.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

#include "app/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

template <class Request, class Plan>
void add_flags(CLI::App* cmd, const Flags<Request, Plan>& flags, Request& rq) {
  for (const auto& f : flags) {
    CLI::Option* o = f.toggle ? cmd->add_flag(f.names, rq.*f.toggle, f.help)
                     : f.list ? cmd->add_option(f.names, rq.*f.list, f.help)
                              : cmd->add_option(f.names, f.text(rq), f.help);
    if (f.required) o->required();
    if (f.min_values > 0) o->expected(f.min_values, -1);
    if (f.one_per_name) o->allow_extra_args(false);
    if (f.refuse) {
      o->check(CLI::Validator([refuse = f.refuse](std::string& value) { return refuse(value); },
                              f.refused_what));
    }
  }
}

// Subcommand `name` of `parent`: `flags` on a request of its own and, when it is chosen, `run`
// on that request as the action.
template <class Request, class Plan>
CLI::App* add_command(CLI::App& parent, Action& action, const char* name, const char* help,
                      const Flags<Request, Plan>& flags, int (*run)(const Request&)) {
  auto rq = std::make_shared<Request>();
  CLI::App* cmd = parent.add_subcommand(name, help);
  add_flags(cmd, flags, *rq);
  cmd->callback([rq, run, &action] { action = [rq, run] { return run(*rq); }; });
  return cmd;
}

}  // namespace cb
