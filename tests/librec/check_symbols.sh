#!/bin/sh
# check_symbols.sh LIB - librectrace.so exports exactly the API and the macros'
# targets (librec.map), nothing internal. (The hooks appear twice on x86-64
# and ARM64, also under glibc's version: hooks.c; pthread_create is
# REC_SAMPLE's, under glibc's versions: sample.c, as are sigaction, signal,
# bsd_signal, sysv_signal, ssignal, sigset, sigignore (the host's handlers)
# and the longjmp family (out of them), and so is dlclose:
# modules.c; the exec family, exec.c; _exit and _Exit, crash.c: a program's crash
# handler that ends the process is captured first.)
set -eu
got=$(nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "D" || $2 == "B" { sub(/@.*/, "", $3); print $3 }' | sort -u)
want=$(printf '%s\n' _Exit _exit __cyg_profile_func_enter __cyg_profile_func_exit __longjmp_chk __sigaction __sysv_signal _longjmp bsd_signal dlclose execl execle execlp execv execve execveat execvp execvpe fexecve longjmp pthread_create rec__annot rec__disabled rec__enter rec__exit rec__message rec__prod rec_flush rec_snapshot rec_start rec_stop rec_strerror rec_thread_name rec_version sigaction sigignore siglongjmp signal sigset ssignal sysv_signal | sort)
if [ "$got" != "$want" ]; then
	echo "exported symbols differ:"; echo "got:"; echo "$got"; echo "want:"; echo "$want"
	exit 1
fi
echo "1 passed, 0 failed"
