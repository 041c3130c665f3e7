package io.auditpipe.flink.chain;

import java.io.Serializable;
import java.nio.file.Path;

/**
 * The chain's keys, as files read where the chain's tasks run (docs/security.md): the Ed25519 pair
 * that signs the heads ({@link HeadSigner}) and the key that authenticates each link ({@link
 * LinkKey}). Either may be null: heads unsigned, links without a MAC.
 */
public record ChainKeys(String signingKeyFile, String linkKeyFile) implements Serializable {
    public static final ChainKeys NONE = new ChainKeys(null, null);

    /** Loads both, so that a bad file stops the job where it is built, with its reason. */
    public ChainKeys checked() {
        signer();
        linkKey();
        return this;
    }

    /** The heads' signer, null without a signing key. */
    public HeadSigner signer() {
        return signingKeyFile == null ? null : HeadSigner.load(Path.of(signingKeyFile));
    }

    /** The links' key, null without one. */
    public LinkKey linkKey() {
        return linkKeyFile == null ? null : LinkKey.load(Path.of(linkKeyFile));
    }
}
