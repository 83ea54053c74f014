/*
 * common_settings.c - the one place where topotune reads its environment (API in tt_common.h,
 * "Settings").  Every documented TOPOTUNE_* variable is a row of the table below: its type, its
 * accepted range and its default.  Library code asks tt_setting() instead of calling getenv; a
 * front end that turns an option into a setting (topo-exec -T, --bind, --predict ...) calls
 * tt_setting_set() for this process instead of setenv.  tt_settings_check() validates the typed
 * rows up front with one message per variable ("NAME='value': must be ... (unset it for the
 * default)").  Rows of type TT_SETTING_TEXT are parsed by the module named in `owner`, with its
 * own messages.  docs/ lists the same variables (tests/cli/test_settings_docs.sh checks it).
 *
 * Variables of other programs (launchers' RANK, MASTER_ADDR, SLURM_*, NCCL's NCCL_*) are their
 * interface, not ours: tt_setting() reads them too (so that the environment is read here only),
 * but they have no row.
 *
 * This file holds the table, the reads and the store of values set for this process, and uses
 * nothing but libc (the log reads its variables here, and errors log); setting a value and
 * checking the typed rows, which report errors, are common_settings_set.c.
 */
#include "common_internal.h"
#include "tt_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POW2_4K_1G "a power of two 4K..1G"

static const tt_setting_info table[] = {
    /* checked by tt_settings_check (topo-exec refuses a bad value before anything runs) */
    {"TOPOTUNE_CHUNK_BYTES", TT_SETTING_SIZE, 64, 1LL << 30, "a pipeline chunk size 64..1G (K/M/G suffixes)", "512K",
     "exec"},
    {"TOPOTUNE_SHM_RING_BYTES", TT_SETTING_SIZE_POW2, 4096, 1LL << 30, POW2_4K_1G, "1M", "exec"},
    {"TOPOTUNE_IB_RING_BYTES", TT_SETTING_SIZE_POW2, 4096, 1LL << 30, POW2_4K_1G, "1M", "exec"},
    {"TOPOTUNE_TIMEOUT_MS", TT_SETTING_INT, 1, 86400000LL, "milliseconds 1..86400000", "30000", "exec"},
    {"TOPOTUNE_SPIN_US", TT_SETTING_INT, 0, 10000000LL, "microseconds 0..10000000", "20", "exec"},
    {"TOPOTUNE_THREAD_NODES", TT_SETTING_INT, 1, 1024, "a node count 1..1024 (at most --host)", "1", "exec"},
    {"TOPOTUNE_IB_GID_INDEX", TT_SETTING_INT, 0, 255, "a GID index 0..255", "0", "exec"},
    {"TOPOTUNE_GPU_EMULATE_HOSTS", TT_SETTING_INT, 1, 1024,
     "an emulated host count 1..1024 (at most the process ranks)", "unset", "exec"},
    {"TOPOTUNE_HOST_BIND", TT_SETTING_CHOICE, 0, 0, "auto, core, cpu or none", "auto", "exec"},
    /* parsed where they are used */
    {"TOPOTUNE_DEBUG", TT_SETTING_TEXT, 0, 0, "NONE, WARN, INFO or TRACE", "WARN", "common"},
    {"TOPOTUNE_DEBUG_SUBSYS", TT_SETTING_TEXT, 0, 0, "a comma-separated list of subsystems", "all", "common"},
    {"TOPOTUNE_DEBUG_FILE", TT_SETTING_TEXT, 0, 0, "a file path", "stderr", "common"},
    {"TOPOTUNE_HWLOC_READER", TT_SETTING_TEXT, 0, 0, "a reader name", "auto", "topo"},
    {"TOPOTUNE_SYSFS_ROOT", TT_SETTING_TEXT, 0, 0, "a directory", "/", "topo"},
    {"TOPOTUNE_SCAN_DEVICE_PROBES", TT_SETTING_TEXT, 0, 0, "0 or 1", "1", "topo"},
    {"TOPOTUNE_SCAN_EXCLUDE", TT_SETTING_TEXT, 0, 0, "a comma-separated list of probes", "unset", "topo"},
    {"TOPOTUNE_GPU_PART", TT_SETTING_TEXT, 0, 0, "a GPU part name", "unset", "topo"},
    {"TOPOTUNE_FABRIC", TT_SETTING_TEXT, 0, 0, "a fabric name", "detected", "bin"},
    {"TOPOTUNE_PREDICT_TOPO", TT_SETTING_TEXT, 0, 0, "a topology file", "unset", "bin"},
    {"TOPOTUNE_CALIBRATION", TT_SETTING_TEXT, 0, 0, "a calibration file", "built-in", "bin"},
    {"TOPOTUNE_PREDICT_NODES", TT_SETTING_TEXT, 0, 0, "a node count 1..65536", "1", "bin"},
    {"TOPOTUNE_NO_F16C", TT_SETTING_TEXT, 0, 0, "set or unset", "unset", "exec"},
    {"TOPOTUNE_TRANSPORT", TT_SETTING_TEXT, 0, 0, "auto, shm, tcp or ib", "auto", "exec"},
    {"TOPOTUNE_IB_HCA", TT_SETTING_TEXT, 0, 0, "name[:port]", "first active port", "exec"},
    {"TOPOTUNE_BOOTSTRAP_ADDR", TT_SETTING_TEXT, 0, 0, "an address", "unset", "exec"},
    {"TOPOTUNE_MASTER_PORT", TT_SETTING_TEXT, 0, 0, "a port", "MASTER_PORT", "exec"},
    {"TOPOTUNE_JOB_ID", TT_SETTING_TEXT, 0, 0, "a job identity", "the launcher's", "exec"},
    {"TOPOTUNE_JOB_SECRET", TT_SETTING_TEXT, 0, 0, "a secret shared by the job's ranks", "the key file", "exec"},
    {"TOPOTUNE_JOB_SECRET_FILE", TT_SETTING_TEXT, 0, 0, "a key file only its owner can read",
     "~/.config/topotune/job-secret", "exec"},
    {"TOPOTUNE_GPU_TRANSPORT", TT_SETTING_TEXT, 0, 0, "auto, host or net", "auto", "exec"},
    {"TOPOTUNE_FAULT", TT_SETTING_TEXT, 0, 0, "drop-tcp|corrupt:RANK[:SEQ]", "unset", "exec"},
    {"TOPOTUNE_FAULT_SLOW", TT_SETTING_TEXT, 0, 0, "ALGO:USEC", "unset", "exec"},
    {"TOPOTUNE_TUNER_TABLE", TT_SETTING_TEXT, 0, 0, "a table file", "unset", "plugin"},
    {"TOPOTUNE_TUNER_FALLBACK", TT_SETTING_TEXT, 0, 0, "nccl or nearest", "nccl", "plugin"},
    /* read only by the tests (tests/unit/support_test_hooks.c, test_*.c), never by the library */
    {"TOPOTUNE_GPU_TEST_STALL_RANK", TT_SETTING_TEST, 0, 0, "a rank", "unset", "tests"},
    {"TOPOTUNE_TEST_SLOWDOWN", TT_SETTING_TEST, 0, 0, "a factor", "unset", "tests"},
};

const tt_setting_info *tt_settings_table(size_t *n)
{
    *n = sizeof table / sizeof *table;
    return table;
}

/* values set by the front end for this process (tt_setting_set): at most one per row */
enum { MAX_SET = sizeof table / sizeof *table };
static struct {
    const char *name;
    char *value; /* NULL: unset for this process */
} set_values[MAX_SET];
static int nset;
static pthread_mutex_t set_mu = PTHREAD_MUTEX_INITIALIZER;

static int find_set(const char *name)
{
    for (int i = 0; i < nset; i++)
        if (!strcmp(set_values[i].name, name))
            return i;
    return -1;
}

const tt_setting_info *tt_setting_lookup(const char *name)
{
    for (size_t i = 0; name && i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].name, name))
            return &table[i];
    return NULL;
}

const char *tt_setting(const char *name)
{
    pthread_mutex_lock(&set_mu);
    int i = find_set(name);
    const char *v = i >= 0 ? set_values[i].value : NULL;
    pthread_mutex_unlock(&set_mu);
    return i >= 0 ? v : getenv(name);
}

int common_setting_store(const tt_setting_info *s, char *copy)
{
    pthread_mutex_lock(&set_mu);
    int i = find_set(s->name);
    if (i < 0) { /* a new row: nset < MAX_SET, as every row is set at most once here */
        i = nset++;
        set_values[i].name = s->name;
    } else {
        free(set_values[i].value); /* a value handed out before stays valid only until this call */
    }
    set_values[i].value = copy;
    pthread_mutex_unlock(&set_mu);
    return 0;
}
