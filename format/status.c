/* SPDX-License-Identifier: MIT */
/*
 * status.c - names for enum recfmt_status and the one-line description of
 * where a problem is ("frame 3 at byte 1234: bad checksum"), used by every
 * tracetool command and by librec's diagnostics alike.
 */
#include "recfmt.h"

const char *recfmt_status_str(enum recfmt_status status)
{
	switch (status) {
	case RECFMT_OK: return "ok";
	case RECFMT_TRUNCATED: return "truncated";
	case RECFMT_CORRUPT: return "corrupt";
	case RECFMT_UNSUPPORTED_VERSION: return "unsupported version";
	case RECFMT_NOMEM: return "out of memory";
	case RECFMT_IO: return "I/O error";
	case RECFMT_END_OF_INPUT: return "end of input";
	}
	return "unknown status";
}

void recfmt_error_describe(const struct recfmt_error *err, char *out, size_t out_bytes)
{
	switch (err->status) {
	case RECFMT_TRUNCATED:
	case RECFMT_CORRUPT:
	case RECFMT_UNSUPPORTED_VERSION:
		if (err->record_offset)
			snprintf(out, out_bytes, "frame %llu at byte %llu (record at +%llu): %s",
				 (unsigned long long)err->frame_index,
				 (unsigned long long)err->frame_offset,
				 (unsigned long long)err->record_offset, err->message);
		else
			snprintf(out, out_bytes, "frame %llu at byte %llu: %s",
				 (unsigned long long)err->frame_index,
				 (unsigned long long)err->frame_offset, err->message);
		break;
	default:
		snprintf(out, out_bytes, "%s", err->message);
		break;
	}
}
