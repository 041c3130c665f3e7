package io.auditpipe.flink.chain;

import java.io.Serializable;

/**
 * Where a server's chain stood: its last link's number and digest, written at most once per {@code
 * chain.head-interval} to the chain-heads collection and the archive's manifest. A head is an
 * anchor: once written, rewriting the events before it (and their digests) no longer matches it. An
 * imported chain ({@code auditpipe import}) has heads of its own, naming it. The id makes a head
 * written again after a replay a duplicate, ignored. Signed with the pipeline's key ({@link
 * HeadSigner}), a head is an anchor that whoever can write to the store cannot forge; each names
 * the head before it, so a removed head leaves a hole.
 */
public class ChainHead implements Serializable {
    private static final long serialVersionUID = 1L;

    public String server;

    /**
     * The imported chain this head anchors ({@link
     * io.auditpipe.flink.records.IngestedEvent#chain}); null: the live chain.
     */
    public String chain;

    public long seq;
    public String digest;
    public String lastEventId;
    public long lastEventTimeMillis;

    /** When the job wrote the head (processing time): the only field a replay may change. */
    public long recordedAtMillis;

    /**
     * The seq of this chain's head before this one (null: its first head): a removed head leaves a
     * hole.
     */
    public Long previousSeq;

    /**
     * The signing key's id and the Ed25519 signature of the head ({@link HeadSigner}); null when
     * unsigned.
     */
    public String keyId;

    public String signature;

    public ChainHead() {}

    public ChainHead(
            String server,
            long seq,
            String digest,
            String lastEventId,
            long lastEventTimeMillis,
            long recordedAtMillis) {
        this.server = server;
        this.seq = seq;
        this.digest = digest;
        this.lastEventId = lastEventId;
        this.lastEventTimeMillis = lastEventTimeMillis;
        this.recordedAtMillis = recordedAtMillis;
    }

    /** {@code <server>/<seq>}, or {@code <server>/<chain>/<seq>} for an imported chain. */
    public String id() {
        return chain == null ? server + "/" + seq : server + "/" + chain + "/" + seq;
    }

    @Override
    public String toString() {
        return "ChainHead{" + id() + " " + digest + "}";
    }
}
