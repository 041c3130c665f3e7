package io.auditpipe.flink.chain;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Authenticates each link of the chain with a key the store never sees (docs/security.md): a link's
 * {@code chain_mac} is the first 16 bytes, in hex, of HMAC-SHA-256 over ({@link #TAG}, a newline,
 * the link's number in decimal, a newline, its digest in hex). The digest already covers the event
 * and every link before it ({@link EventChain}); the MAC makes a link that whoever holds the
 * store's credentials appends or rewrites, with a correct digest, one that verify names as
 * unauthenticated.
 *
 * <p>The key file (option {@code chain.link-key-file}) holds one key per line, 64 hex digits (32
 * bytes); lines starting with {@code #} and blank ones are skipped. The first key links; the others
 * are former keys that verify still accepts (rotation: put a new key first). Each key's id is the
 * first 16 hex digits of the SHA-256 of its bytes. cli/auditpipe/evidence/chain.py computes the
 * same MAC (tests/unit/evidence/test_chain.py and LinkKeyTest hold the same vector).
 */
public final class LinkKey {
    public static final String TAG = "auditpipe-chain-link/1";

    /** Bytes of the HMAC kept: 128 bits. */
    public static final int MAC_BYTES = 16;

    private final Mac mac;
    private final String keyId;

    public LinkKey(byte[] key) {
        if (key.length != 32)
            throw new IllegalArgumentException("a link key is 32 bytes, not " + key.length);
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            keyId =
                    HexFormat.of()
                            .formatHex(
                                    java.security.MessageDigest.getInstance("SHA-256").digest(key),
                                    0,
                                    8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The key that links: the first of the file; a clear error naming the file when it cannot
     * serve.
     */
    public static LinkKey load(Path file) {
        String text = KeyFile.read("chain.link-key-file", file);
        for (String line : text.split("\n")) {
            String key = line.strip();
            if (key.isEmpty() || key.startsWith("#")) continue;
            if (!key.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException(
                        "chain.link-key-file: "
                                + file
                                + ": a key is 64 hex digits (32 bytes)"
                                + " on a line of its own (auditpipe makes one: docs/security.md)");
            }
            return new LinkKey(HexFormat.of().parseHex(key));
        }
        throw new IllegalArgumentException(
                "chain.link-key-file: "
                        + file
                        + " holds no key (64 hex digits on a line;"
                        + " auditpipe makes one: docs/security.md)");
    }

    public String keyId() {
        return keyId;
    }

    /**
     * The MAC of link {@code seq} with {@code digest}. Not thread-safe: one per operator instance.
     */
    public String mac(long seq, String digest) {
        mac.update((TAG + "\n" + seq + "\n" + digest).getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(mac.doFinal(), 0, MAC_BYTES);
    }
}
