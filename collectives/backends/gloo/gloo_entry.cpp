// The gloo backend's registry entry.
#include "collectives/backends/gloo/gloo_entry.hpp"

#include "collectives/backends/gloo/gloo_backend.hpp"
#include "collectives/backends/gloo/gloo_control.hpp"
#include "collectives/backends/gloo/gloo_transport.hpp"

namespace cb {

BackendEntry gloo_entry() {
  return {.name = "gloo",
          .description = "Gloo collectives over TCP on host memory",
          .unavailable_reason = [](const BackendOptions&) { return std::string(); },
          .create = [](const BackendOptions& o) { return gloo_backend::make_backend(o); },
          .check_options =
              [](const BackendOptions& o) {
                if (!o.flag("--gloo-iface").empty()) {
                  gloo_backend::check_interface(o.flag("--gloo-iface"));
                }
              },
          .library_name = "Gloo",
          .roof = RoofModel::HostMemory,
          .flags = {{"--gloo-iface",
                     "network interface for Gloo (default: loopback on one host, else the host "
                     "name's address)"}},
          .local_control =
              [](const LaunchInfo& launch, double timeout_seconds) {
                return gloo_backend::make_file_store_control(launch.store_dir, launch.rank,
                                                             launch.size, timeout_seconds);
              },
          .rendezvous_control =
              [](Control& rendezvous, const std::string& address, double timeout_seconds) {
                return gloo_backend::make_rendezvous_control(rendezvous, address, timeout_seconds);
              }};
}

}  // namespace cb
