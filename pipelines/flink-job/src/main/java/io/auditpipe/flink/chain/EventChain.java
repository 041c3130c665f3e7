package io.auditpipe.flink.chain;

import io.auditpipe.flink.document.CanonicalForm;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.IngestedEvent;
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

        /**
         * Makes {@code e} the link after {@code tip}: its seq, its stored document (built here),
         * the digest of that after the tip's, and with {@code key} (null: none) the MAC of both;
         * the tip moves on to it.
         */
        public void append(IngestedEvent e, ChainTip tip, LinkKey key) {
            e.chainSeq = tip.seq + 1;
            Document document = EventDocument.of(e); // without chain fields: no digest yet
            e.chainDigest = link(tip.digest == null ? "" : tip.digest, document);
            document.append(EventDocument.SEQ_FIELD, e.chainSeq)
                    .append(EventDocument.DIGEST_FIELD, e.chainDigest);
            if (key != null) {
                e.chainMac = key.mac(e.chainSeq, e.chainDigest);
                document.append(EventDocument.MAC_FIELD, e.chainMac);
            }
            e.document = document;
            tip.seq = e.chainSeq;
            tip.digest = e.chainDigest;
            tip.lastEventId = e.event.id;
            tip.lastEventTime = e.event.eventTimeMillis;
        }

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
