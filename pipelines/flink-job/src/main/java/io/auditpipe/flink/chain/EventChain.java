package io.auditpipe.flink.chain;

import io.auditpipe.flink.document.CanonicalForm;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.bson.Document;

/**
 * The tamper-evidence chain (docs/archive.md): per server, every stored event carries {@code
 * chain_seq} (1, 2, 3, ... in the order the job received the server's records) and {@code
 * chain_digest} = SHA-256 of (previous digest in hex, a newline, the event's canonical form, {@link
 * CanonicalForm}). The first link's previous digest is the empty string.
 */
public final class EventChain {
    private EventChain() {}

    /** The digest of the link after {@code previousDigest} ("" for the first) for this document. */
    public static String link(String previousDigest, Document event) {
        return new Linker().link(previousDigest, event);
    }

    /**
     * Links one event after another with a digest and a canonical-form buffer it keeps (one per
     * operator instance; not thread-safe). The canonical form is written straight into UTF-8 bytes
     * and hashed from there, with no String in between: this runs once per stored event on the
     * chain's thread.
     */
    public static final class Linker {
        private final MessageDigest sha = sha256();
        private final CanonicalForm canonical = new CanonicalForm();

        public String link(String previousDigest, Document event) {
            canonical.writeDocument(event);
            sha.reset();
            sha.update(previousDigest.getBytes(StandardCharsets.US_ASCII));
            sha.update((byte) '\n');
            sha.update(canonical.buffer(), 0, canonical.length());
            return HexFormat.of().formatHex(sha.digest());
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
