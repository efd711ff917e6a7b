// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: perfmarkd's request path on bytes from a client.
 * Frames are split and parsed (proto_parse_frame), each request validated
 * (proto_request_parse, every command), and the options it carries taken as
 * the daemon takes them: create's session document (sessdef_from_json,
 * untrusted), record's recording options (recspec_from_json) and command
 * line (proto_record_argv), record-start's (proto_record_start_opts).  Whatever
 * is accepted must survive its round trip: written back to JSON and read
 * again it gives the same document (CHECKed), and a frame re-encoded parses
 * to the same request.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "proto.h"
#include "recspec.h"
#include "sessdef.h"

/* the two documents must read the same; both are put */
static void same(struct json_object *j, struct json_object *j2, const char *what)
{
	const int fl = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
	char *a = strdup(json_object_to_json_string_ext(j, fl));
	const char *b = json_object_to_json_string_ext(j2, fl);

	CHECK(a, "out of memory");
	CHECK(!strcmp(a, b), "%s changed in its round trip:\n%s\n%s", what, a, b);
	free(a);
	json_object_put(j);
	json_object_put(j2);
}

/* both forms: every key (stored, shown) and only what is set (a client's request) */
static void recspec_round_trip(const struct recspec *r)
{
	for (int all = 0; all < 2; all++) {
		struct json_object *j = recspec_to_json(r, all);
		struct recspec r2;
		char err[256];

		CHECK(recspec_from_json(j, &r2, err, sizeof(err)) == 0, "recspec read back: %s", err);
		same(j, recspec_to_json(&r2, all), "recspec");
	}
}

static void sessdef_round_trip(const struct sessdef *d, bool state)
{
	struct json_object *j = sessdef_to_json(d, state);
	struct sessdef d2;
	char err[256];

	CHECK(sessdef_from_json(j, &d2, state, err, sizeof(err)) == 0, "sessdef read back: %s", err);
	if (!state)          /* the name travels beside the document in a create request */
		memcpy(d2.name, d->name, sizeof(d2.name));
	same(j, sessdef_to_json(&d2, state), "session document");
}

/* record's command line: bounded, every entry a string */
static void record_argv(struct json_object *msg)
{
	char **argv;
	int argc, i;

	if (proto_record_argv(msg, &argv, &argc))
		return;
	CHECK(argc >= 0 && argc <= PROTO_ARGV_MAX && !argv[argc], "argv of %d entries", argc);
	for (i = 0; i < argc; i++)
		CHECK(strlen(argv[i]) <= PROTO_ARG_MAX, "argv[%d] of %zu bytes", i, strlen(argv[i]));
	proto_argv_free(argv);
}

/* a frame encoded again parses to the same request */
static void frame_round_trip(struct json_object *msg, const struct proto_request *rq)
{
	struct json_object *msg2 = NULL;
	struct proto_request rq2;
	char err[256], *frame;
	size_t len, used = 0;

	CHECK(proto_encode(msg, &frame, &len) == 0, "cannot encode an accepted request");
	CHECK(proto_parse_frame(frame, len, &used, &msg2, err, sizeof(err)) == 1 && used == len,
	      "re-encoded frame does not parse: %s", err);
	CHECK(proto_request_parse(msg2, &rq2, err, sizeof(err)) == 0, "re-encoded request refused: %s", err);
	CHECK(rq2.cmd == rq->cmd && rq2.version == rq->version && !strcmp(rq2.name, rq->name),
	      "re-encoded request differs");
	json_object_put(msg2);
	free(frame);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char err[256];
	size_t off = 0;

	while (off < size) {
		struct json_object *msg = NULL;
		struct proto_request rq;
		struct recspec spec;
		struct sessdef d;
		size_t used = 0;
		int r = proto_parse_frame(data + off, size - off, &used, &msg, err, sizeof(err));

		if (r <= 0 && !used)
			break;
		if (r == 1 && !proto_request_parse(msg, &rq, err, sizeof(err))) {
			frame_round_trip(msg, &rq);
			switch (rq.cmd) {
			case PROTO_CMD_CREATE:
				if (!sessdef_from_json(rq.def, &d, false, err, sizeof(err))) {
					snprintf(d.name, sizeof(d.name), "%s", rq.name);
					sessdef_round_trip(&d, false);
					sessdef_round_trip(&d, true);
				}
				break;
			case PROTO_CMD_RECORD:
				if (!recspec_from_json(rq.def, &spec, err, sizeof(err)))
					recspec_round_trip(&spec);
				record_argv(msg);
				break;
			case PROTO_CMD_RECORD_START: {
				bool pipe;
				int pid;

				if (!proto_record_start_opts(msg, &pipe, &pid, err, sizeof(err)))
					CHECK(pid >= 0, "record-start accepted pid %d", pid);
				break;
			}
			default:
				break;
			}
		}
		json_object_put(msg);
		off += used;
	}
	return 0;
}
