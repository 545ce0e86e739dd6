// `commbench list collectives|backends|algorithms|dtypes`: what this build and machine offer.
#include <memory>

#include "app/list.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_list(CLI::App& app, Action& action) {
  auto rq = std::make_shared<ListRequest>();
  CLI::App* l = app.add_subcommand("list", "what this build and this machine offer");
  l->add_option("what", rq->what, "collectives, backends, algorithms or dtypes")->required();
  l->add_option("-B,--backends", rq->backends, "only these backends");
  l->add_option("-c,--collectives", rq->collectives, "only these collectives");
  l->callback([rq, &action] { action = [rq] { return list(*rq); }; });
}

}  // namespace cb
