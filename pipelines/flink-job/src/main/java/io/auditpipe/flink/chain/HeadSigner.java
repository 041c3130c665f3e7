package io.auditpipe.flink.chain;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Signs chain heads with Ed25519 (docs/security.md). The key is the pipeline's alone: the store
 * never sees it, so whoever holds the store's credentials can rewrite events, their links and the
 * heads in the store, but cannot make a head that {@code auditpipe verify} accepts; verify needs
 * only the public key.
 *
 * <p>The key file (option {@code chain.signing-key-file}) holds two PEM blocks: the private key
 * (PKCS#8, {@code PRIVATE KEY}) and its public key (X.509 SubjectPublicKeyInfo, {@code PUBLIC
 * KEY}); the signer checks at load that they belong together. A head's {@code key_id} is the first
 * 16 hex digits of the SHA-256 of the public key's DER form, so that verify can tell a head signed
 * by another key (a rotated one) from a forged signature.
 *
 * <p>What is signed ({@link #signedBytes}): each field as a netstring ({@code <byte length>:<UTF-8
 * bytes>,}), in this order: the tag {@code auditpipe-chain-head/1}, server, chain ("" for the live
 * chain), seq, previous head's seq ("" for a chain's first head), digest, last event id, last event
 * time and recorded-at time (epoch milliseconds). Length prefixes make the encoding unambiguous
 * whatever the fields hold. cli/auditpipe/evidence/signing.py builds the same bytes.
 */
public final class HeadSigner {
    public static final String TAG = "auditpipe-chain-head/1";
    private static final Pattern PEM =
            Pattern.compile(
                    "-----BEGIN ([A-Z ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");

    private final PrivateKey privateKey;
    private final String keyId;
    private final Signature signature;

    private HeadSigner(PrivateKey privateKey, PublicKey publicKey) throws GeneralSecurityException {
        this.privateKey = privateKey;
        this.keyId = keyId(publicKey);
        this.signature = Signature.getInstance("Ed25519");
        byte[] probe = TAG.getBytes(StandardCharsets.US_ASCII);
        Signature check = Signature.getInstance("Ed25519");
        check.initVerify(publicKey);
        check.update(probe);
        if (!check.verify(sign(probe))) {
            throw new GeneralSecurityException(
                    "the public key in the file is not the private key's");
        }
    }

    /** The signer of the key file; a clear error naming the file when it cannot serve. */
    public static HeadSigner load(Path file) {
        String text = KeyFile.read("chain.signing-key-file", file);
        byte[] privateDer = null;
        byte[] publicDer = null;
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            byte[] der = Base64.getMimeDecoder().decode(m.group(2));
            if (m.group(1).equals("PRIVATE KEY")) privateDer = der;
            if (m.group(1).equals("PUBLIC KEY")) publicDer = der;
        }
        if (privateDer == null || publicDer == null) {
            throw new IllegalArgumentException(
                    "chain.signing-key-file: "
                            + file
                            + " must hold an Ed25519 key as two PEM"
                            + " blocks, PRIVATE KEY (PKCS#8) and PUBLIC KEY (auditpipe makes one: docs/security.md)");
        }
        try {
            KeyFactory keys = KeyFactory.getInstance("Ed25519");
            return new HeadSigner(
                    keys.generatePrivate(new PKCS8EncodedKeySpec(privateDer)),
                    keys.generatePublic(new X509EncodedKeySpec(publicDer)));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(
                    "chain.signing-key-file: "
                            + file
                            + " holds no usable Ed25519 key pair: "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * The first 16 hex digits of the SHA-256 of the public key's DER (SubjectPublicKeyInfo) form.
     */
    public static String keyId(PublicKey publicKey) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(publicKey.getEncoded());
            return HexFormat.of().formatHex(hash, 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public String keyId() {
        return keyId;
    }

    /** Sets the head's key id and signature. */
    public void sign(ChainHead head) {
        head.keyId = keyId;
        head.signature = Base64.getEncoder().encodeToString(sign(signedBytes(head)));
    }

    private byte[] sign(byte[] message) {
        try {
            signature.initSign(privateKey);
            signature.update(message);
            return signature.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("signing a chain head failed", e);
        }
    }

    /** The bytes a head's signature covers (see the class comment). */
    public static byte[] signedBytes(ChainHead h) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        for (String field :
                new String[] {
                    TAG,
                    h.server,
                    h.chain == null ? "" : h.chain,
                    Long.toString(h.seq),
                    h.previousSeq == null ? "" : Long.toString(h.previousSeq),
                    h.digest,
                    h.lastEventId == null ? "" : h.lastEventId,
                    Long.toString(h.lastEventTimeMillis),
                    Long.toString(h.recordedAtMillis)
                }) {
            byte[] bytes = field.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(Integer.toString(bytes.length).getBytes(StandardCharsets.US_ASCII));
            out.write(':');
            out.writeBytes(bytes);
            out.write(',');
        }
        return out.toByteArray();
    }
}
