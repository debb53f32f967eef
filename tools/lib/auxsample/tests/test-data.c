// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared data the tests read, for the PT and ETM tests alike, and for
 * the fuzzers (which include this file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "test-data.h"

const char *data_dir(void)
{
	return getenv("AUXSAMPLE_DATA") ?: "../shared/data";
}

uint8_t *read_path(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	buf = fstat(fileno(f), &st) ? NULL : malloc(st.st_size + 1);
	if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[st.st_size] = 0;
	*size = st.st_size;
	return buf;
}

uint8_t *read_data(const char *name, size_t *size)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", data_dir(), name);
	return read_path(path, size);
}

int read_nothing(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return -1;
}
