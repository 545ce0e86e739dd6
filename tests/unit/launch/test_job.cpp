// The job machinery's pure parts: splitting a --launch prefix and passing environment variables
// through each kind of launcher.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "launch/job.hpp"

namespace cb {
namespace {

using Words = std::vector<std::string>;

TEST(Job, SplitsAPrefixLikeAShell) {
  EXPECT_EQ(split_command("mpirun -np 16  --hostfile hosts"),
            (Words{"mpirun", "-np", "16", "--hostfile", "hosts"}));
  EXPECT_EQ(split_command("srun --export='A=1 2' \"x\\\"y\" a\\ b"),
            (Words{"srun", "--export=A=1 2", "x\"y", "a b"}));
  EXPECT_THROW(split_command("mpirun 'open"), Error);
  EXPECT_THROW(split_command("   "), Error);
}

TEST(Job, KnowsLaunchersByName) {
  EXPECT_EQ(launcher_kind("srun", "Open MPI"), LauncherKind::Slurm);
  EXPECT_EQ(launcher_kind("/usr/bin/mpirun.openmpi", "MPICH"), LauncherKind::OpenMpi);
  EXPECT_EQ(launcher_kind("mpiexec.hydra", "Open MPI"), LauncherKind::Mpich);
  EXPECT_EQ(launcher_kind("mpiexec.mpich", "Open MPI"), LauncherKind::Mpich);
  EXPECT_THROW(launcher_kind("ssh", "Open MPI"), Error);
}

TEST(Job, PassesEnvironmentTheWayEachLauncherNeeds) {
  const Words prefix = {"L", "-n", "2"};
  const Words program = {"/bin/commbench", "run"};
  const EnvList env = {{"NCCL_BUFFSIZE", "4194304"}, {"OMPI_MCA_btl", "self,vader"}};
  EXPECT_EQ(launcher_command(prefix, LauncherKind::OpenMpi, env, program),
            (Words{"L", "-n", "2", "-x", "NCCL_BUFFSIZE", "-x", "OMPI_MCA_btl", "/bin/commbench",
                   "run"}));
  EXPECT_EQ(launcher_command(prefix, LauncherKind::Mpich, env, program),
            (Words{"L", "-n", "2", "-genv", "NCCL_BUFFSIZE", "4194304", "-genv", "OMPI_MCA_btl",
                   "self,vader", "/bin/commbench", "run"}));
  // srun cannot take a comma inside --export: the launcher's own environment carries them.
  EXPECT_EQ(launcher_command(prefix, LauncherKind::Slurm, env, program),
            (Words{"L", "-n", "2", "--export=ALL", "/bin/commbench", "run"}));
  EXPECT_EQ(launcher_command(prefix, LauncherKind::Slurm, {{"A", "1"}, {"B", "2"}}, program),
            (Words{"L", "-n", "2", "--export=ALL,A=1,B=2", "/bin/commbench", "run"}));
}

}  // namespace
}  // namespace cb
