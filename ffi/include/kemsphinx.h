/*
 * kemsphinx.h - C ABI of kemsphinx: KEMSphinx mix-network packets with the
 * MLKEM768-X25519 hybrid KEM, byte-compatible with the Katzenpost reference.
 *
 * Link with libkemsphinx_ffi.a (plus -lpthread -ldl -lm) or
 * libkemsphinx_ffi.so. Licence: MIT OR Apache-2.0.
 *
 * Contract, for every function:
 *  - Returns an int status, KEMSPHINX_OK (0) on success. Never unwinds: a
 *    Rust panic is caught and returned as KEMSPHINX_ERR_INTERNAL. (Like any
 *    Rust code it aborts if memory allocation fails, or if the library was
 *    built with panic = "abort".)
 *  - Every buffer is a pointer and a length; the length must equal the
 *    constant named for it (else KEMSPHINX_ERR_LENGTH). NULL where a pointer
 *    is required is KEMSPHINX_ERR_NULL. Both are checked before any work.
 *  - Output buffers are written only on success. Inputs are read before
 *    outputs are written, so they may overlap. kemsphinx_unwrap works in
 *    place and leaves the packet unchanged on error.
 *  - Every function that makes a handle (kemsphinx_T **out) writes it to
 *    *out on success and NULL to *out on every error, so
 *        T *k; if (f(..., &k)) goto out; ... out: kemsphinx_T_free(k);
 *    is safe without initialising k. (Only if out itself is NULL is nothing
 *    written: KEMSPHINX_ERR_NULL.)
 *  - Handles are immutable: one kemsphinx_private_key may be used by many
 *    threads at once. Free each handle exactly once; NULL frees are no-ops.
 *  - The caller guarantees what cannot be checked: each non-NULL pointer is
 *    valid for its length and each handle is live.
 */
#ifndef KEMSPHINX_H
#define KEMSPHINX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Lengths, in bytes (KEMSPHINX_HOPS is a count) ---------------------- */

#define KEMSPHINX_HOPS 4
#define KEMSPHINX_PACKET_LEN 16150
#define KEMSPHINX_HEADER_LEN 5962
#define KEMSPHINX_PAYLOAD_LEN 10156
#define KEMSPHINX_ENCRYPTED_REPLY_LEN 10188
#define KEMSPHINX_SURB_LEN 6058
#define KEMSPHINX_SURB_KEYS_LEN 320
#define KEMSPHINX_PUBLIC_KEY_LEN 1216
#define KEMSPHINX_PRIVATE_KEY_LEN 1280
#define KEMSPHINX_KEY_SEED_LEN 96
#define KEMSPHINX_PUBLIC_KEY_PEM_LEN 1734
#define KEMSPHINX_PRIVATE_KEY_PEM_LEN 1821
#define KEMSPHINX_NODE_ID_LEN 32
#define KEMSPHINX_RECIPIENT_ID_LEN 32
#define KEMSPHINX_SURB_ID_LEN 16
#define KEMSPHINX_REPLAY_TAG_LEN 32

/* ---- Status codes -------------------------------------------------------- */

typedef enum kemsphinx_status {
    KEMSPHINX_OK = 0,
    KEMSPHINX_ERR_NULL = 1,        /* a required pointer was NULL */
    KEMSPHINX_ERR_LENGTH = 2,      /* a length is not its constant; or hops != KEMSPHINX_HOPS */
    KEMSPHINX_ERR_VERSION = 3,     /* unsupported header version */
    KEMSPHINX_ERR_KEM = 4,         /* KEM decapsulation failed */
    KEMSPHINX_ERR_MAC = 5,         /* header MAC mismatch: not for this hop, or corrupted */
    KEMSPHINX_ERR_COMMAND = 6,     /* malformed routing commands, or impossible ones at creation */
    KEMSPHINX_ERR_PAYLOAD_TAG = 7, /* payload tag mismatch */
    KEMSPHINX_ERR_KEY = 8,         /* a key failed validation */
    KEMSPHINX_ERR_PEM = 9,         /* PEM text refused: label, framing or base64 */
    KEMSPHINX_ERR_ARGUMENT = 10,   /* an argument out of range (has_delay not 0 or 1) */
    KEMSPHINX_ERR_INTERNAL = 11    /* a panic was caught; nothing was written */
} kemsphinx_status;

/* A static description of a status. Never NULL; do not free. */
const char *kemsphinx_status_str(int status);

/* ---- Keys ---------------------------------------------------------------- */

typedef struct kemsphinx_private_key kemsphinx_private_key; /* opaque */
typedef struct kemsphinx_public_key kemsphinx_public_key;   /* opaque */

/* A fresh key pair from the operating system's RNG. */
int kemsphinx_private_key_generate(kemsphinx_private_key **out);
/* Derive a key pair from a seed as the reference's DeriveKeyPair does. */
int kemsphinx_private_key_from_seed(const uint8_t *seed, size_t seed_len,
                                    kemsphinx_private_key **out);
/* Load the raw encoding; refuses a key inconsistent with its seed. */
int kemsphinx_private_key_from_bytes(const uint8_t *bytes, size_t len,
                                     kemsphinx_private_key **out);
/* Load PEM text labelled "MLKEM768-X25519 PRIVATE KEY" (len: text length). */
int kemsphinx_private_key_from_pem(const uint8_t *text, size_t len,
                                   kemsphinx_private_key **out);
int kemsphinx_private_key_to_bytes(const kemsphinx_private_key *key, uint8_t *out,
                                   size_t len);
/* PEM text, KEMSPHINX_PRIVATE_KEY_PEM_LEN bytes, not NUL-terminated. */
int kemsphinx_private_key_to_pem(const kemsphinx_private_key *key, uint8_t *out,
                                 size_t len);
/* A new public key handle for the key's public half. */
int kemsphinx_private_key_public_key(const kemsphinx_private_key *key,
                                     kemsphinx_public_key **out);
/* Zeroizes the key's secrets. */
void kemsphinx_private_key_free(kemsphinx_private_key *key);

int kemsphinx_public_key_from_bytes(const uint8_t *bytes, size_t len,
                                    kemsphinx_public_key **out);
/* Load PEM text labelled "MLKEM768-X25519 PUBLIC KEY". */
int kemsphinx_public_key_from_pem(const uint8_t *text, size_t len,
                                  kemsphinx_public_key **out);
int kemsphinx_public_key_to_bytes(const kemsphinx_public_key *key, uint8_t *out,
                                  size_t len);
int kemsphinx_public_key_to_pem(const kemsphinx_public_key *key, uint8_t *out,
                                size_t len);
void kemsphinx_public_key_free(kemsphinx_public_key *key);

/* ---- Mix: replay tag and unwrap ------------------------------------------ */

typedef enum kemsphinx_action {
    KEMSPHINX_ACTION_FORWARD = 1,   /* send the packet to next_hop after the delay */
    KEMSPHINX_ACTION_DELIVER = 2,   /* payload for recipient at packet + payload_offset */
    KEMSPHINX_ACTION_SURB_REPLY = 3 /* encrypted reply for recipient, answering surb_id */
} kemsphinx_action;

/* Fields the action does not use are zero. */
typedef struct kemsphinx_unwrapped {
    uint32_t action;    /* a kemsphinx_action */
    uint32_t has_delay; /* 1 if the hop was given a node_delay */
    uint32_t delay_ms;
    uint8_t replay_tag[KEMSPHINX_REPLAY_TAG_LEN];
    uint8_t next_hop[KEMSPHINX_NODE_ID_LEN];       /* FORWARD */
    uint8_t recipient[KEMSPHINX_RECIPIENT_ID_LEN]; /* DELIVER, SURB_REPLY */
    uint8_t surb_id[KEMSPHINX_SURB_ID_LEN];        /* SURB_REPLY */
    size_t payload_offset; /* DELIVER: payload; SURB_REPLY: encrypted reply */
    size_t payload_len;    /* KEMSPHINX_PAYLOAD_LEN or KEMSPHINX_ENCRYPTED_REPLY_LEN */
} kemsphinx_unwrapped;

/* The replay tag of a packet: one hash, no key, computed in place (the
 * packet is read, not copied; do not modify it during the call). Check it
 * before unwrapping; remember it only once kemsphinx_unwrap has succeeded. */
int kemsphinx_replay_tag(const uint8_t *packet, size_t packet_len, uint8_t *tag_out,
                         size_t tag_len);

/* Unwrap one layer in place. On success the buffer holds the outgoing
 * packet (FORWARD) or the decrypted payload (see out). */
int kemsphinx_unwrap(const kemsphinx_private_key *key, uint8_t *packet, size_t packet_len,
                     kemsphinx_unwrapped *out);

/* Unwrap count packets with one key, in place, the X25519 halves of their
 * decapsulations computed together (a node draining its queue). The
 * packets lie one after another (packets_len == count *
 * KEMSPHINX_PACKET_LEN). statuses[i] gets packet i's status and, where it
 * is KEMSPHINX_OK, outs[i] its result (payload_offset from packet i's
 * start); a packet whose status is not KEMSPHINX_OK is unchanged. Returns
 * KEMSPHINX_OK once every packet has its status, or KEMSPHINX_ERR_NULL /
 * KEMSPHINX_ERR_LENGTH for the call's own arguments (nothing written).
 * packets, outs and statuses must not overlap. */
int kemsphinx_unwrap_batch(const kemsphinx_private_key *key, uint8_t *packets,
                           size_t packets_len, size_t count, kemsphinx_unwrapped *outs,
                           int *statuses);

/* ---- Client: packets, SURBs, replies ------------------------------------- */

typedef struct kemsphinx_hop {
    uint8_t node_id[KEMSPHINX_NODE_ID_LEN];
    const kemsphinx_public_key *public_key;
    uint32_t delay_ms;  /* node_delay for this hop, if has_delay */
    uint32_t has_delay; /* 0 or 1 */
} kemsphinx_hop;

/* A forward packet over path[0..hops) (hops == KEMSPHINX_HOPS) delivering
 * payload to recipient at the last hop. Fresh OS randomness. */
int kemsphinx_create_packet(const kemsphinx_hop *path, size_t hops,
                            const uint8_t *recipient, size_t recipient_len,
                            const uint8_t *payload, size_t payload_len,
                            uint8_t *packet_out, size_t packet_len);

/* A SURB over path back to recipient, tagged surb_id, and the secret keys
 * that decrypt its reply (keep them; wipe them when done). */
int kemsphinx_create_surb(const kemsphinx_hop *path, size_t hops,
                          const uint8_t *recipient, size_t recipient_len,
                          const uint8_t *surb_id, size_t surb_id_len,
                          uint8_t *surb_out, size_t surb_len,
                          uint8_t *surb_keys_out, size_t surb_keys_len);

/* The reply packet carrying payload on a SURB, and the node to send it to. */
int kemsphinx_surb_reply(const uint8_t *surb, size_t surb_len,
                         const uint8_t *payload, size_t payload_len,
                         uint8_t *packet_out, size_t packet_len,
                         uint8_t *first_hop_out, size_t first_hop_len);

/* Decrypt and check a delivered reply; reply itself is not modified. */
int kemsphinx_decrypt_reply(const uint8_t *surb_keys, size_t surb_keys_len,
                            const uint8_t *reply, size_t reply_len,
                            uint8_t *payload_out, size_t payload_len);

#ifdef __cplusplus
}
#endif

#endif /* KEMSPHINX_H */
