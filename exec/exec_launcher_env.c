/* exec_launcher_env.c - which launcher started this process: the rank / size variable pair it set
 * (torchrun, Open MPI, MPICH/Hydra PMI, Slurm).  Read by tt_comm_init_env (exec_comm.c), the Slurm
 * rendezvous (exec_slurm.c) and the tools. */
#include <stdlib.h>

#include "tt_exec.h"

int tt_env_rank_vars(const char **rank_var, const char **size_var)
{
    /* torchrun's names, else what the launcher set (Open MPI's mpirun, MPICH/Hydra's PMI,
     * Slurm's srun) - no MPI library needed */
    static const char *const pairs[][2] = {{"RANK", "WORLD_SIZE"},
                                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           {"PMI_RANK", "PMI_SIZE"},
                                           {"SLURM_PROCID", "SLURM_NTASKS"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (tt_setting(pairs[i][0]) && tt_setting(pairs[i][1])) {
            if (rank_var) *rank_var = pairs[i][0];
            if (size_var) *size_var = pairs[i][1];
            return 1;
        }
    return 0;
}
