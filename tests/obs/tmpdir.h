/* SPDX-License-Identifier: MIT */
/**
 * @file tmpdir.h
 * A fresh temporary directory per test program, as cmocka group setup and
 * teardown (KEEP=1 in the environment keeps it for a look).
 */
#ifndef HOMA_TESTS_TMPDIR_H
#define HOMA_TESTS_TMPDIR_H

/** The directory of the running group ("" before tmpdir_setup()). */
extern char tmpdir[64];

/** tmpdir_setup() - Create /tmp/homa-obs-XXXXXX into tmpdir. Return: 0 or -1. */
int tmpdir_setup(void **state);

/** tmpdir_teardown() - Remove it and all inside (unless KEEP is set). Return: 0 or -1. */
int tmpdir_teardown(void **state);

#endif
