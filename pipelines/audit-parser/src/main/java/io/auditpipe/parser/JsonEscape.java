package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;

/**
 * JSON's escapes, written once. Into bytes ({@link #write}, for the stored documents' canonical
 * form and the event stream): a quote and a backslash after a backslash, the named control
 * characters by name ({@code \n \r \t \b \f}) and the others as {@code \}{@code u00XX}, as Python's
 * {@code json.dumps} writes them. Into text ({@link #quote}, for the message keys an import writes
 * and the payload text of Cloud SQL records): every control character as {@code \}{@code u00XX}.
 * What else a writer escapes (U+2028 and U+2029 for JavaScript readers) is its own.
 */
public final class JsonEscape {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private JsonEscape() {}

    /**
     * Whether JSON wants the ASCII character {@code c} escaped: a control character, '"' or '\'.
     */
    public static boolean needed(int c) {
        return c < 0x20 || c == '"' || c == '\\';
    }

    /**
     * Writes the escape of {@code c} (one {@link #needed} says so) into {@code b} at {@code at},
     * which has room for 6 bytes; returns the position after it.
     */
    public static int write(int c, byte[] b, int at) {
        byte named =
                switch (c) {
                    case '"' -> '"';
                    case '\\' -> '\\';
                    case '\n' -> 'n';
                    case '\r' -> 'r';
                    case '\t' -> 't';
                    case '\b' -> 'b';
                    case '\f' -> 'f';
                    default -> 0;
                };
        if (named == 0) return unicode(c, b, at);
        b[at] = '\\';
        b[at + 1] = named;
        return at + 2;
    }

    /** Writes {@code \}{@code uXXXX} of the character {@code c} into {@code b} at {@code at}. */
    public static int unicode(int c, byte[] b, int at) {
        b[at++] = '\\';
        b[at++] = 'u';
        b[at++] = HEX[c >> 12 & 15];
        b[at++] = HEX[c >> 8 & 15];
        b[at++] = HEX[c >> 4 & 15];
        b[at++] = HEX[c & 15];
        return at;
    }

    /** {@code s} as a JSON string, in quotes, each control character as {@code \}{@code u00XX}. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2);
        quote(s, b);
        return b.toString();
    }

    /** Appends {@code s} as a JSON string to {@code b}, as {@link #quote(String)} makes it. */
    public static void quote(String s, StringBuilder b) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20)
                b.append("\\u00").append((char) HEX[c >> 4]).append((char) HEX[c & 15]);
            else b.append(c);
        }
        b.append('"');
    }
}
