/*
 * A four-hop request and SURB reply through the C ABI alone, as a mix node
 * or client in C would drive it. Exits non-zero on any mismatch.
 *
 *   cargo build --release -p kemsphinx-ffi
 *   cc -std=c11 -Wall -Wextra -Werror -I ffi/include ffi/tests/roundtrip.c \
 *      target/release/libkemsphinx_ffi.a -lpthread -ldl -lm -o roundtrip
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kemsphinx.h"

_Static_assert(sizeof(kemsphinx_hop) == KEMSPHINX_NODE_ID_LEN + sizeof(void *) + 8,
               "kemsphinx_hop layout");
_Static_assert(sizeof(kemsphinx_unwrapped) ==
                   (12 + 112 + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t) +
                       2 * sizeof(size_t),
               "kemsphinx_unwrapped layout");

static int passed, failed;

#define CHECK(cond)                                                   \
    do {                                                              \
        if (cond) {                                                   \
            passed++;                                                 \
        } else {                                                      \
            failed++;                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                             \
    } while (0)

#define OK(call) CHECK((call) == KEMSPHINX_OK)

/* The upper layer's framing (not part of the packet format): flags byte,
 * reserved byte, SURB, message. */
#define SURB_FLAG 1
#define MESSAGE_OFFSET (2 + KEMSPHINX_SURB_LEN)

static uint8_t packet[KEMSPHINX_PACKET_LEN];
static uint8_t request[KEMSPHINX_PAYLOAD_LEN];
static uint8_t answer[KEMSPHINX_PAYLOAD_LEN];
static uint8_t reply[KEMSPHINX_ENCRYPTED_REPLY_LEN];
static uint8_t decrypted[KEMSPHINX_PAYLOAD_LEN];
static uint8_t copy[KEMSPHINX_PACKET_LEN];

static kemsphinx_private_key *keys[KEMSPHINX_HOPS];
static kemsphinx_public_key *pubs[KEMSPHINX_HOPS];
static kemsphinx_hop path[KEMSPHINX_HOPS];

static const uint8_t service[KEMSPHINX_RECIPIENT_ID_LEN] = {0x5e, 0x5e, 0x5e};
static const uint8_t client[KEMSPHINX_RECIPIENT_ID_LEN] = {0xc1, 0xc1, 0xc1};
static const uint8_t surb_id[KEMSPHINX_SURB_ID_LEN] = {0x11, 0x22, 0x33};

/* Keys from seeds; node 0's private key and every public key go through
 * PEM text and back, as they would through files. */
static void load_keys(void) {
    for (int i = 0; i < KEMSPHINX_HOPS; i++) {
        uint8_t seed[KEMSPHINX_KEY_SEED_LEN];
        memset(seed, 0x10 + i, sizeof seed);
        OK(kemsphinx_private_key_from_seed(seed, sizeof seed, &keys[i]));
        kemsphinx_public_key *pub = NULL;
        OK(kemsphinx_private_key_public_key(keys[i], &pub));
        uint8_t pem[KEMSPHINX_PUBLIC_KEY_PEM_LEN];
        OK(kemsphinx_public_key_to_pem(pub, pem, sizeof pem));
        OK(kemsphinx_public_key_from_pem(pem, sizeof pem, &pubs[i]));
        kemsphinx_public_key_free(pub);
        memset(path[i].node_id, 0xa0 + i, KEMSPHINX_NODE_ID_LEN);
        path[i].public_key = pubs[i];
        path[i].has_delay = i < KEMSPHINX_HOPS - 1;
        path[i].delay_ms = path[i].has_delay ? 10u * (uint32_t)(i + 1) : 0;
    }
    static uint8_t pem[KEMSPHINX_PRIVATE_KEY_PEM_LEN];
    OK(kemsphinx_private_key_to_pem(keys[0], pem, sizeof pem));
    CHECK(memcmp(pem, "-----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n", 44) == 0);
    kemsphinx_private_key *reloaded = NULL;
    OK(kemsphinx_private_key_from_pem(pem, sizeof pem, &reloaded));
    kemsphinx_private_key_free(keys[0]);
    keys[0] = reloaded;
    /* A public key is refused where a private key is expected. */
    uint8_t pub_pem[KEMSPHINX_PUBLIC_KEY_PEM_LEN];
    kemsphinx_private_key *wrong = NULL;
    OK(kemsphinx_public_key_to_pem(pubs[0], pub_pem, sizeof pub_pem));
    CHECK(kemsphinx_private_key_from_pem(pub_pem, sizeof pub_pem, &wrong) == KEMSPHINX_ERR_PEM);
    CHECK(wrong == NULL);
}

/* Unwrap at all four hops; the last must produce `want`. */
static kemsphinx_unwrapped walk(uint32_t want, const char *what) {
    kemsphinx_unwrapped out;
    uint8_t tags[KEMSPHINX_HOPS][KEMSPHINX_REPLAY_TAG_LEN];
    for (int i = 0; i < KEMSPHINX_HOPS; i++) {
        uint8_t tag[KEMSPHINX_REPLAY_TAG_LEN];
        OK(kemsphinx_replay_tag(packet, sizeof packet, tag, sizeof tag));
        memset(&out, 0xee, sizeof out);
        int status = kemsphinx_unwrap(keys[i], packet, sizeof packet, &out);
        OK(status);
        CHECK(memcmp(tag, out.replay_tag, sizeof tag) == 0);
        memcpy(tags[i], tag, sizeof tag);
        for (int j = 0; j < i; j++) CHECK(memcmp(tags[j], tag, sizeof tag) != 0);
        if (i < KEMSPHINX_HOPS - 1) {
            CHECK(out.action == KEMSPHINX_ACTION_FORWARD);
            CHECK(memcmp(out.next_hop, path[i + 1].node_id, KEMSPHINX_NODE_ID_LEN) == 0);
            CHECK(out.has_delay == 1 && out.delay_ms == path[i].delay_ms);
            CHECK(out.payload_offset == 0 && out.payload_len == 0);
        } else {
            CHECK(out.action == want);
            CHECK(out.has_delay == 0);
        }
        printf("%s hop %d: status %d (%s), action %u, delay %u ms, tag %02x%02x%02x%02x...\n",
               what, i, status, kemsphinx_status_str(status), out.action, out.delay_ms,
               tag[0], tag[1], tag[2], tag[3]);
    }
    return out;
}

/* A batch at the first hop: three fresh packets, then one with a flipped
 * MAC byte (refused, unchanged) and one for another key; each its own
 * status, the good ones forwarded as kemsphinx_unwrap forwards them. */
#define BATCH_COUNT 5
static uint8_t batch[BATCH_COUNT][KEMSPHINX_PACKET_LEN];
static uint8_t batch_copy[BATCH_COUNT][KEMSPHINX_PACKET_LEN];
static void unwrap_in_a_batch(void) {
    for (int i = 0; i < BATCH_COUNT; i++) {
        OK(kemsphinx_create_packet(path, KEMSPHINX_HOPS, service, sizeof service, request,
                                   sizeof request, batch[i], sizeof batch[i]));
    }
    batch[3][KEMSPHINX_PACKET_LEN / 3] ^= 1; /* inside the routing information */
    kemsphinx_hop reversed[KEMSPHINX_HOPS];
    for (int i = 0; i < KEMSPHINX_HOPS; i++) reversed[i] = path[KEMSPHINX_HOPS - 1 - i];
    OK(kemsphinx_create_packet(reversed, KEMSPHINX_HOPS, service, sizeof service, request,
                               sizeof request, batch[4], sizeof batch[4]));
    memcpy(batch_copy, batch, sizeof batch);
    kemsphinx_unwrapped outs[BATCH_COUNT];
    int statuses[BATCH_COUNT];
    CHECK(kemsphinx_unwrap_batch(keys[0], &batch[0][0], sizeof batch - 1, BATCH_COUNT, outs,
                                 statuses) == KEMSPHINX_ERR_LENGTH);
    CHECK(kemsphinx_unwrap_batch(keys[0], &batch[0][0], sizeof batch, BATCH_COUNT, outs,
                                 NULL) == KEMSPHINX_ERR_NULL);
    CHECK(memcmp(batch, batch_copy, sizeof batch) == 0);
    OK(kemsphinx_unwrap_batch(keys[0], &batch[0][0], sizeof batch, BATCH_COUNT, outs, statuses));
    for (int i = 0; i < 3; i++) {
        kemsphinx_unwrapped one;
        OK(statuses[i]);
        OK(kemsphinx_unwrap(keys[0], batch_copy[i], sizeof batch_copy[i], &one));
        CHECK(memcmp(batch[i], batch_copy[i], KEMSPHINX_PACKET_LEN) == 0);
        CHECK(outs[i].action == KEMSPHINX_ACTION_FORWARD && one.action == outs[i].action);
        CHECK(memcmp(outs[i].next_hop, path[1].node_id, KEMSPHINX_NODE_ID_LEN) == 0);
        CHECK(memcmp(outs[i].replay_tag, one.replay_tag, KEMSPHINX_REPLAY_TAG_LEN) == 0);
    }
    CHECK(statuses[3] == KEMSPHINX_ERR_MAC && statuses[4] == KEMSPHINX_ERR_MAC);
    CHECK(memcmp(batch[3], batch_copy[3], 2 * KEMSPHINX_PACKET_LEN) == 0);
    printf("batch of %d: statuses %d %d %d %d %d\n", BATCH_COUNT, statuses[0], statuses[1],
           statuses[2], statuses[3], statuses[4]);
}

/* Errors leave buffers as they were and report the right code. */
static void refusals(const uint8_t *surb_keys) {
    kemsphinx_unwrapped out;
    memcpy(copy, packet, sizeof packet);
    CHECK(kemsphinx_unwrap(keys[1], packet, sizeof packet, &out) == KEMSPHINX_ERR_MAC);
    CHECK(memcmp(copy, packet, sizeof packet) == 0);
    CHECK(kemsphinx_unwrap(keys[0], packet, sizeof packet - 1, &out) == KEMSPHINX_ERR_LENGTH);
    CHECK(kemsphinx_unwrap(keys[0], NULL, sizeof packet, &out) == KEMSPHINX_ERR_NULL);
    CHECK(kemsphinx_unwrap(NULL, packet, sizeof packet, &out) == KEMSPHINX_ERR_NULL);
    CHECK(kemsphinx_unwrap(keys[0], packet, sizeof packet, NULL) == KEMSPHINX_ERR_NULL);
    packet[0] = 1;
    CHECK(kemsphinx_unwrap(keys[0], packet, sizeof packet, &out) == KEMSPHINX_ERR_VERSION);
    packet[0] = 0;
    uint8_t other_keys[KEMSPHINX_SURB_KEYS_LEN];
    memcpy(other_keys, surb_keys, sizeof other_keys);
    other_keys[0] ^= 1;
    CHECK(kemsphinx_decrypt_reply(other_keys, sizeof other_keys, reply, sizeof reply,
                                  decrypted, sizeof decrypted) == KEMSPHINX_ERR_PAYLOAD_TAG);
    path[1].has_delay = 2;
    CHECK(kemsphinx_create_packet(path, KEMSPHINX_HOPS, service, sizeof service, request,
                                  sizeof request, packet, sizeof packet) == KEMSPHINX_ERR_ARGUMENT);
    path[1].has_delay = 1;
    CHECK(kemsphinx_create_packet(path, 3, service, sizeof service, request, sizeof request,
                                  packet, sizeof packet) == KEMSPHINX_ERR_LENGTH);
    CHECK(strcmp(kemsphinx_status_str(12345), "unknown status") == 0);
}

/* The pattern the header promises is safe: a handle variable that was never
 * initialised is NULL after any failed call, so the cleanup path may free it. */
static int load_or_fail(const uint8_t *bytes, size_t len) {
    kemsphinx_private_key *k;
    memset(&k, 0xa5, sizeof k); /* what an uninitialised variable may hold */
    int status = kemsphinx_private_key_from_bytes(bytes, len, &k);
    if (status != KEMSPHINX_OK) goto out;
    CHECK(k != NULL);
out:
    if (status != KEMSPHINX_OK) CHECK(k == NULL);
    kemsphinx_private_key_free(k);
    return status;
}

static void handles_are_null_after_errors(void) {
    uint8_t raw[KEMSPHINX_PRIVATE_KEY_LEN];
    OK(kemsphinx_private_key_to_bytes(keys[1], raw, sizeof raw));
    OK(load_or_fail(raw, sizeof raw));
    CHECK(load_or_fail(raw, sizeof raw - 1) == KEMSPHINX_ERR_LENGTH);
    CHECK(load_or_fail(NULL, sizeof raw) == KEMSPHINX_ERR_NULL);
    raw[40] ^= 1; /* inside the stored encapsulation key */
    CHECK(load_or_fail(raw, sizeof raw) == KEMSPHINX_ERR_KEY);
    kemsphinx_public_key *p;
    memset(&p, 0xa5, sizeof p);
    CHECK(kemsphinx_private_key_public_key(NULL, &p) == KEMSPHINX_ERR_NULL);
    CHECK(p == NULL);
}

int main(void) {
    load_keys();

    /* Client: a SURB for the answer, framed into the request. */
    static uint8_t surb[KEMSPHINX_SURB_LEN];
    uint8_t surb_keys[KEMSPHINX_SURB_KEYS_LEN];
    OK(kemsphinx_create_surb(path, KEMSPHINX_HOPS, client, sizeof client, surb_id,
                             sizeof surb_id, surb, sizeof surb, surb_keys, sizeof surb_keys));
    request[0] = SURB_FLAG;
    memcpy(request + 2, surb, sizeof surb);
    for (size_t i = MESSAGE_OFFSET; i < sizeof request; i++) request[i] = (uint8_t)(i * 7);
    OK(kemsphinx_create_packet(path, KEMSPHINX_HOPS, service, sizeof service, request,
                               sizeof request, packet, sizeof packet));

    /* Four mixes; the last delivers to the service. */
    kemsphinx_unwrapped out = walk(KEMSPHINX_ACTION_DELIVER, "forward");
    CHECK(memcmp(out.recipient, service, sizeof service) == 0);
    CHECK(out.payload_len == KEMSPHINX_PAYLOAD_LEN);
    CHECK(out.payload_offset + out.payload_len <= sizeof packet);
    CHECK(memcmp(packet + out.payload_offset, request, sizeof request) == 0);

    /* Service: answer on the SURB found in the payload. */
    for (size_t i = 0; i < sizeof answer; i++) answer[i] = (uint8_t)(i * 13 + 5);
    uint8_t first_hop[KEMSPHINX_NODE_ID_LEN];
    OK(kemsphinx_surb_reply(packet + out.payload_offset + 2, KEMSPHINX_SURB_LEN, answer,
                            sizeof answer, packet, sizeof packet, first_hop, sizeof first_hop));
    CHECK(memcmp(first_hop, path[0].node_id, sizeof first_hop) == 0);

    /* Four mixes back; the last hands the still-encrypted reply over. */
    out = walk(KEMSPHINX_ACTION_SURB_REPLY, "reply");
    CHECK(memcmp(out.recipient, client, sizeof client) == 0);
    CHECK(memcmp(out.surb_id, surb_id, sizeof surb_id) == 0);
    CHECK(out.payload_len == KEMSPHINX_ENCRYPTED_REPLY_LEN);
    memcpy(reply, packet + out.payload_offset, sizeof reply);

    /* Client: decrypt with the SURB keys. */
    OK(kemsphinx_decrypt_reply(surb_keys, sizeof surb_keys, reply, sizeof reply, decrypted,
                               sizeof decrypted));
    CHECK(memcmp(decrypted, answer, sizeof answer) == 0);

    refusals(surb_keys);
    unwrap_in_a_batch();
    handles_are_null_after_errors();
    for (int i = 0; i < KEMSPHINX_HOPS; i++) {
        kemsphinx_private_key_free(keys[i]);
        kemsphinx_public_key_free(pubs[i]);
    }
    printf("ffi: %d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
