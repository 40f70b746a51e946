/*
 * The pod sandbox's pause process for the test cluster's kubelet (the image
 * docker.io/cdk8s-sidecars-test/pause:1, built by scripts/cluster/images.sh with musl-gcc -static).
 * What Kubernetes' own build/pause/linux/pause.c does: sleep until SIGINT or SIGTERM and, as PID 1
 * of a pod that shares its process namespace, reap the children that are handed to it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    printf("pause (cdk8s-sidecars test cluster) 1\n");
    return 0;
  }
  if (getpid() != 1) fprintf(stderr, "pause: warning: not PID 1\n");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = reap;
  sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  for (;;) pause();
  return 1;
}
