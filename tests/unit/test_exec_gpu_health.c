/* test_exec_gpu_health.c - tt_gpu_health_check: a machine without NVIDIA GPUs is ABSENT (host
 * ranks are fine), a GPU node whose GPUs cannot be used is BROKEN with the cause named (issue #34
 * item 1).  Each case stages the driver state: a machine under TOPOTUNE_SYSFS_ROOT (PCI devices,
 * the nvidia module, /dev/nvidia0) and what CUDA answers (the cuda_probe test hook). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_test_hooks.h"
#include "tt_exec.h"

static exec_gpu_cuda_state staged;
static int probe_staged(exec_gpu_cuda_state *s)
{
    *s = staged;
    return 1;
}

static char root[256];

static void put(const char *rel, const char *text)
{
    char p[512], cmd[700];
    snprintf(p, sizeof p, "%s%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void gpu_at(const char *bdf, const char *vendor, const char *cls)
{
    char rel[128];
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/vendor", bdf);
    put(rel, vendor);
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/class", bdf);
    put(rel, cls);
}

static void bind_to(const char *bdf, const char *driver)
{
    char link[512], target[128], dir[512];
    snprintf(dir, sizeof dir, "%s/sys/bus/pci/drivers/%s", root, driver);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(link, sizeof link, "%s/sys/bus/pci/devices/%s/driver", root, bdf);
    snprintf(target, sizeof target, "../../drivers/%s", driver);
    assert_int_equal(symlink(target, link), 0);
}

/* a fresh machine with nothing on it and a CUDA that finds no driver (as on a machine without one) */
static int setup(void **st)
{
    (void)st;
    snprintf(root, sizeof root, "/tmp/tt_gpu_health_XXXXXX");
    assert_non_null(mkdtemp(root));
    put("/sys/bus/pci/devices/0000:00:00.0/vendor", "0x8086\n"); /* a host bridge */
    put("/sys/bus/pci/devices/0000:00:00.0/class", "0x060000\n");
    setenv("TOPOTUNE_SYSFS_ROOT", root, 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    memset(&staged, 0, sizeof staged);
    staged.built = 1;
    staged.err = 35; /* cudaErrorInsufficientDriver, driver version 0: no libcuda */
    snprintf(staged.errname, sizeof staged.errname, "cudaErrorInsufficientDriver");
    snprintf(staged.errmsg, sizeof staged.errmsg, "CUDA driver version is insufficient for CUDA runtime version");
    staged.runtime_ver = 12040;
    exec_test_hook.cuda_probe = probe_staged;
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    exec_test_hook.cuda_probe = NULL;
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    unsetenv("CUDA_VISIBLE_DEVICES");
    return 0;
}

static tt_gpu_health check(void)
{
    tt_gpu_health h;
    tt_gpu_health_check(&h);
    return h;
}

static void test_no_gpu_is_absent(void **st)
{
    (void)st;
    gpu_at("0000:03:00.0", "0x1a03\n", "0x030000\n"); /* a BMC's VGA (ASPEED) is no CUDA GPU */
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_ABSENT);
    assert_int_equal(h.ncuda, 0);
    assert_int_equal(h.npci, 0);
    assert_non_null(strstr(h.why, "no NVIDIA GPU on this machine"));
    assert_null(strstr(h.why, "insufficient")); /* not CUDA's words for a missing driver */
    char why[600];
    assert_int_equal(tt_gpu_available(why, sizeof why), 0);
    assert_string_equal(why, h.why);
}

static void test_no_driver_is_broken(void **st)
{
    (void)st;
    gpu_at("0000:65:00.0", "0x10de\n", "0x030200\n");
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_int_equal(h.npci, 2);
    assert_int_equal(h.driver, 0);
    assert_non_null(strstr(h.why, "no NVIDIA driver: 2 NVIDIA GPU(s) on the PCI bus (0000:17:00.0, 0000:65:00.0)"));
    assert_non_null(strstr(h.why, "nvidia kernel module is not loaded"));
    assert_null(strstr(h.why, "insufficient"));
    assert_null(strstr(h.why, "no usable GPU"));
}

static void test_device_node_alone_is_broken(void **st)
{
    (void)st;
    put("/dev/nvidia0", ""); /* PCI bus hidden (some containers), the device node is there */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/sys/bus'", root);
    assert_int_equal(system(cmd), 0);
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_int_equal(h.npci, -1);
    assert_non_null(strstr(h.why, "/dev/nvidia0"));
}

static void test_bound_elsewhere(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    bind_to("0000:17:00.0", "vfio-pci");
    put("/sys/module/nvidia/version", "550.54.15\n");
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_non_null(strstr(h.why, "bound to the vfio-pci driver, not to nvidia"));
}

static void test_no_driver_library(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    bind_to("0000:17:00.0", "nvidia");
    put("/sys/module/nvidia/version", "550.54.15\n");
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_int_equal(h.driver, 1);
    assert_string_equal(h.driver_version, "550.54.15");
    assert_non_null(strstr(h.why, "no NVIDIA driver library"));
    assert_non_null(strstr(h.why, "libcuda.so.1"));
}

static void test_old_driver(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    put("/sys/module/nvidia/version", "470.82.01\n");
    staged.driver_ver = 11040;
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_non_null(strstr(h.why, "too old for this build: it supports CUDA 11.4, topotune was built with CUDA 12.4"));
}

static void test_hidden_by_visible_devices(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    put("/sys/module/nvidia/version", "550.54.15\n");
    staged.err = 100;
    staged.driver_ver = 12040;
    snprintf(staged.errname, sizeof staged.errname, "cudaErrorNoDevice");
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_non_null(strstr(h.why, "CUDA_VISIBLE_DEVICES= hides every GPU"));
}

static void test_fabric_manager(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    put("/sys/module/nvidia/version", "550.54.15\n");
    staged.err = 802;
    staged.driver_ver = 12040;
    snprintf(staged.errname, sizeof staged.errname, "cudaErrorSystemNotReady");
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_non_null(strstr(h.why, "fabric manager"));
}

static void test_build_without_cuda(void **st)
{
    (void)st;
    gpu_at("0000:17:00.0", "0x10de\n", "0x030200\n");
    memset(&staged, 0, sizeof staged); /* the stub: built = 0 */
    tt_gpu_health h = check();
    assert_int_equal(h.state, TT_GPU_BROKEN);
    assert_non_null(strstr(h.why, "no CUDA support"));
    teardown(st);
    setup(st);
    memset(&staged, 0, sizeof staged);
    h = check(); /* no GPU and no CUDA: absent, and says both */
    assert_int_equal(h.state, TT_GPU_ABSENT);
    assert_non_null(strstr(h.why, "no CUDA support either"));
}

static void test_cuda_ready(void **st)
{
    (void)st;
    staged.err = 0;
    staged.count = 2;
    tt_gpu_health h = check(); /* CUDA's answer wins over what the file system shows */
    assert_int_equal(h.state, TT_GPU_READY);
    assert_int_equal(h.ncuda, 2);
    assert_string_equal(h.why, "2 CUDA device(s)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_gpu_is_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_driver_is_broken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_node_alone_is_broken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_driver_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hidden_by_visible_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fabric_manager, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_without_cuda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda_ready, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
