/*
 * cli_exec_stop.c - topo-exec stopped by SIGTERM or SIGINT (Slurm's scancel or time limit, Ctrl-C;
 * issue #32 item 8): the signals are blocked in every thread and taken by one thread with sigwait,
 * which runs topo-exec's stop callback (rank 0: the rows so far and the reason on stdout and in -J)
 * and then ends the process by the same signal (a shell's status 128+N).  Nothing waits for the
 * collectives: a rank blocked in one (a stopped or slow peer) ends just as fast.  The other ranks
 * then fail on the lost peer as on any death.  A signal ignored when topo-exec starts (nohup, a
 * background job without job control) stays ignored.  docs/reliability.md, "Stopped by a signal".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_exec.h"

static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER;
static void (*stop_fn)(void *user, int sig);
static void *stop_user;
static sigset_t stop_set;

const char *tt_cli_exec_signame(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal";
}

/* die by sig itself (its default action), so that a parent sees what happened */
static void die_by(int sig)
{
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action of SIGTERM/SIGINT ends the process */
}

static void *stop_main(void *arg)
{
    (void)arg;
    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0)
        ;
    /* a second signal ends the process at once, whatever the first one's work is waiting for (a stdout
     * pipe nobody reads): the default action again, unblocked in this thread only */
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&stop_set, s) == 1)
            signal(s, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
    pthread_mutex_lock(&stop_mu);
    void (*fn)(void *, int) = stop_fn;
    void *user = stop_user;
    pthread_mutex_unlock(&stop_mu);
    if (fn)
        fn(user, sig);
    else
        fprintf(stderr, "topo-exec: stopped by %s\n", tt_cli_exec_signame(sig));
    die_by(sig);
    return NULL;
}

void tt_cli_exec_stop_init(void)
{
    static const int sigs[] = {SIGTERM, SIGINT};
    sigemptyset(&stop_set);
    int n = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* ignored by whoever started us: leave it so */
        sigaddset(&stop_set, sigs[i]);
        n++;
    }
    if (!n)
        return;
    /* before any other thread exists: every thread started later (communicator workers, rank threads,
     * MPI's) inherits the blocked mask, so only stop_main receives them */
    sigset_t old;
    if (pthread_sigmask(SIG_BLOCK, &stop_set, &old) != 0)
        return;
    pthread_attr_t at;
    pthread_t th;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, stop_main, NULL) != 0)
        pthread_sigmask(SIG_SETMASK, &old, NULL); /* no thread: the signals' default action, as before */
    pthread_attr_destroy(&at);
}

void tt_cli_exec_stop_on(void (*fn)(void *user, int sig), void *user)
{
    pthread_mutex_lock(&stop_mu);
    stop_fn = fn;
    stop_user = user;
    pthread_mutex_unlock(&stop_mu);
}
