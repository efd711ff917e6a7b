/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests only: PERFMARK_TEST_HOLD=PREFIX holds a daemon or a recorder at a
 * named place while the file PREFIX.WHAT exists, so a test can look at it
 * there, or kill it there, whatever the machine's speed.  Unset (always, but
 * in the tests), each costs a getenv().
 */
#ifndef PERFMARK_TESTHOLD_H
#define PERFMARK_TESTHOLD_H

#include <stdbool.h>

/* PREFIX.WHAT exists */
bool test_hold_armed(const char *what);
/* wait while PREFIX.WHAT exists; say_held: after creating PREFIX.WHAT.held */
void test_hold_wait(const char *what, bool say_held);

#endif
