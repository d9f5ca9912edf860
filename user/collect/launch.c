// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "collect/launch.h"
#include "util/log.h"

extern char **environ;

static bool is_exec_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* Like execvp's search, done before fork so the child only calls execve. */
static int resolve(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	bool found = false;

	if (strchr(name, '/')) {
		if (snprintf(out, len, "%s", name) >= (int)len)
			return -ENAMETOOLONG;
		if (access(out, F_OK))
			return -ENOENT;
		return is_exec_file(out) ? 0 : -EACCES;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p += strcspn(p, ":") + 1) {
		size_t dl = strcspn(p, ":");

		if (snprintf(out, len, "%.*s%s%s", (int)dl, p, dl ? "/" : "",
			     name) < (int)len) {
			if (is_exec_file(out))
				return 0;
			if (!access(out, F_OK))
				found = true;
		}
		if (!p[dl])
			break;
	}
	return found ? -EACCES : -ENOENT;
}

int launch_start(struct launch *l, char *const argv[],
		 const sigset_t *child_mask, bool stdout_to_stderr)
{
	char path[PATH_MAX];
	int pipefd[2], status, err;

	memset(l, 0, sizeof(*l));
	l->err_pipe = -1;
	err = resolve(argv[0], path, sizeof(path));
	if (err) {
		pr_err("cannot run '%s': %s", argv[0],
		       err == -ENOENT ? "command not found" : strerror(-err));
		return err;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		pr_err("pipe: %s", strerror(errno));
		return err;
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		pr_err("fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (l->pid == 0) {
		/* Child: nothing after the stop but execve (and on failure,
		 * the report of its errno).
		 */
		close(pipefd[0]);
		if (stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		sigprocmask(SIG_SETMASK, child_mask, NULL);
		kill(getpid(), SIGSTOP);
		execve(path, argv, environ);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(pipefd[1]);
	l->err_pipe = pipefd[0];
	if (waitpid(l->pid, &status, WUNTRACED) != l->pid ||
	    !WIFSTOPPED(status)) {
		pr_err("the command did not start as expected");
		kill(l->pid, SIGKILL);
		waitpid(l->pid, &status, 0);
		close(l->err_pipe);
		l->err_pipe = -1;
		return -ECHILD;
	}
	return 0;
}

int launch_release(struct launch *l)
{
	if (kill(l->pid, SIGCONT))
		return -errno;
	return 0;
}

void launch_kill(struct launch *l)
{
	int status;

	if (l->reaped)
		return;
	kill(l->pid, SIGKILL);
	while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
		;
	l->reaped = true;
	l->status = status;
	if (l->err_pipe >= 0)
		close(l->err_pipe);
	l->err_pipe = -1;
}

bool launch_poll(struct launch *l)
{
	int status;
	pid_t r;

	if (l->reaped)
		return true;
	do {
		r = waitpid(l->pid, &status, WNOHANG);
	} while (r < 0 && errno == EINTR);
	if (r == l->pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
		l->reaped = true;
		l->status = status;
	}
	return l->reaped;
}

int launch_exec_error(struct launch *l)
{
	int err = 0;

	if (l->err_pipe < 0)
		return 0;
	if (read(l->err_pipe, &err, sizeof(err)) != sizeof(err))
		err = 0;
	close(l->err_pipe);
	l->err_pipe = -1;
	return err;
}

int launch_exit_status(const struct launch *l)
{
	if (!l->reaped)
		return 0;
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return WEXITSTATUS(l->status);
}
