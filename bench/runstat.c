/* runstat OUTFILE TIMEOUT_S CMD [ARG...]: run CMD, then write "wall_seconds
   maxrss_kb wait_status" for it to OUTFILE.  bench/run.py measures every program
   through this: a child forked straight from Python starts with Python's ~13 MB
   as its ru_maxrss (Linux carries the pre-exec high-water mark across execve),
   which would hide the peak RSS of small programs.  Forked from this small
   process, the floor is ~1 MB.  After TIMEOUT_S seconds the command is killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;

static void on_alarm(int sig) { (void)sig; kill(child, SIGKILL); }

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: runstat OUTFILE TIMEOUT_S CMD [ARG...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    child = fork();
    if (child < 0) { perror("fork"); return 2; }
    if (child == 0) {
        execvp(argv[3], argv + 3);
        perror(argv[3]);
        _exit(127);
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)atoi(argv[2]));
    int status;
    struct rusage ru;
    while (wait4(child, &status, 0, &ru) < 0)
        if (errno != EINTR) { perror("wait4"); return 2; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    FILE *f = fopen(argv[1], "w");
    if (!f) { perror(argv[1]); return 2; }
    fprintf(f, "%.9f %ld %d\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
            ru.ru_maxrss, status);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
