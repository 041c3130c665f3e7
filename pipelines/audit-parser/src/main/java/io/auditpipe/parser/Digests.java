package io.auditpipe.parser;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 of original lines, as lowercase hex (what {@code sha256sum} prints). */
public final class Digests {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final ThreadLocal<MessageDigest> SHA256 =
            ThreadLocal.withInitial(
                    () -> {
                        try {
                            return MessageDigest.getInstance("SHA-256");
                        } catch (NoSuchAlgorithmException e) {
                            throw new IllegalStateException("every JDK has SHA-256", e);
                        }
                    });

    private Digests() {}

    public static String sha256Hex(byte[] bytes) {
        byte[] d = SHA256.get().digest(bytes == null ? new byte[0] : bytes);
        char[] out = new char[d.length * 2];
        for (int i = 0; i < d.length; i++) {
            out[2 * i] = HEX[(d[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[d[i] & 0xf];
        }
        return new String(out);
    }
}
