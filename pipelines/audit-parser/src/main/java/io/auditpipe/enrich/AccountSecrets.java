package io.auditpipe.enrich;

/**
 * The secrets account statements carry (docs/compliance.md, "Masking"): the password or hash in
 * {@code CREATE USER / ALTER USER / GRANT ... IDENTIFIED [WITH plugin] BY|AS|USING '...'},
 * MariaDB's {@code IDENTIFIED VIA plugin USING PASSWORD('...')}, {@code SET PASSWORD [FOR user] =
 * '...'}, {@code PASSWORD('...')}, and any {@code ..._PASSWORD = '...'} or {@code PASSWORD '...'}
 * option ({@code MASTER_PASSWORD}, {@code SOURCE_PASSWORD}, a federated server's {@code OPTIONS}).
 *
 * <p>After each keyword ({@code IDENTIFIED}, or a word ending in {@code PASSWORD} followed by
 * {@code =}, {@code (}, a literal or {@code FOR}: a value, not a column read) the first string
 * literal that starts within {@link #REACH} characters (after a space, {@code =} or {@code (}),
 * before a {@code ,}, {@code ;} or {@code )}, is the secret (after {@code PASSWORD FOR user}: the
 * first one after the {@code =}); every character between its quotes becomes {@code *}, the quotes
 * and the rest of the statement stay. The literal is found in the forms the statement takes in a
 * record: {@code '...'} and {@code "..."} as written (a backslash escapes the next character, a
 * doubled quote is one), {@code \"...\"} inside a JSON string, {@code ""...""} inside a CSV field,
 * {@code &apos;...&apos;} and {@code &quot;...&quot;} in XML. A literal without its closing quote
 * is masked to the end of the text (nothing of it is known to be no secret). Keywords are matched
 * without regard to case, as the server does.
 */
final class AccountSecrets {
    private AccountSecrets() {}

    /** How far after its keyword a secret's literal may start. */
    static final int REACH = 160;

    private static final String IDENTIFIED = "identified";
    private static final String PASSWORD = "password";
    private static final String[][] QUOTES = {
        {"&apos;", "&apos;"},
        {"&quot;", "&quot;"},
        {"&#39;", "&#39;"},
        {"&#34;", "&#34;"},
        {"\\\"", "\\\""},
        {"\\'", "\\'"},
        {"\"\"", "\"\""},
        {"'", "'"},
        {"\"", "\""}
    };

    /**
     * Whether the text may hold a secret: cheap, before the scan (most statements have neither
     * word).
     */
    static boolean mayHold(String text) {
        return indexOfWord(text, 0) >= 0;
    }

    /** Masks every secret literal of {@code cs} in place; whether there was one. */
    static boolean mask(char[] cs) {
        String text = new String(cs);
        boolean any = false;
        int resume = 0; // after the last literal masked: a keyword inside it is part of the secret
        for (int k = indexOfWord(text, 0); k >= 0; k = indexOfWord(text, Math.max(k + 1, resume))) {
            if (k < resume) continue;
            int end = endOfKeyword(text, k);
            if (end < 0) continue;
            int at = end;
            if (text.regionMatches(true, k, PASSWORD, 0, PASSWORD.length())) {
                at = afterFor(text, end);
                if (at < 0) {
                    int next = skipSpaces(text, end);
                    // a value follows: "= ...", "(...)" or a literal; not a column read ("password
                    // FROM")
                    if (next >= text.length()
                            || !(text.charAt(next) == '='
                                    || text.charAt(next) == '('
                                    || opens(text, next))) continue;
                    at = next;
                }
            }
            int after = maskLiteralFrom(text, cs, at);
            if (after >= 0) {
                any = true;
                resume = after;
            }
        }
        return any;
    }

    /**
     * The next position at or after {@code from} where "identified" or "password" starts, or -1.
     * Every statement is scanned, so a keyword is compared only where its first two letters are
     * (ASCII letters: {@code c | 0x20} is the lower case of each, and of no other character).
     */
    private static int indexOfWord(String t, int from) {
        for (int i = Math.max(from, 0), n = t.length() - 7; i < n; i++) {
            int c = t.charAt(i) | 0x20;
            int next = t.charAt(i + 1) | 0x20;
            if (c == 'i'
                    && next == 'd'
                    && t.regionMatches(true, i, IDENTIFIED, 0, IDENTIFIED.length())) return i;
            if (c == 'p' && next == 'a' && t.regionMatches(true, i, PASSWORD, 0, PASSWORD.length()))
                return i;
        }
        return -1;
    }

    /**
     * Where the keyword at {@code k} ends, or -1 if it is no keyword: "identified" as a whole word,
     * "password" at the end of a word (PASSWORD, MASTER_PASSWORD, mysql_native_password); either
     * followed by a space, '=' or '(' (a clause, not the word inside a literal).
     */
    private static int endOfKeyword(String t, int k) {
        boolean identified = t.regionMatches(true, k, IDENTIFIED, 0, IDENTIFIED.length());
        int end = k + (identified ? IDENTIFIED.length() : PASSWORD.length());
        if (end < t.length()) {
            char next =
                    // a clause follows: not the word inside a literal ('identified') or a longer
                    // name
                    t.charAt(end);
            if (!(Character.isWhitespace(next) || next == '=' || next == '(')) return -1;
        }
        if (identified && k > 0 && isWordChar(t.charAt(k - 1))) return -1;
        return end;
    }

    /**
     * After {@code PASSWORD FOR user}: the position after its '=' (within reach), or -1 if no FOR
     * follows.
     */
    private static int afterFor(String t, int from) {
        int i = skipSpaces(t, from);
        if (i + 3 > t.length()
                || !t.regionMatches(true, i, "for", 0, 3)
                || (i + 3 < t.length() && isWordChar(t.charAt(i + 3)))) return -1;
        for (int j = i + 3, limit = Math.min(t.length(), from + REACH); j < limit; j++) {
            char c = t.charAt(j);
            if (c == '=') return j + 1;
            if (c == ';') return -1;
        }
        return -1;
    }

    /**
     * Masks the first literal that opens within reach of {@code from}: where it ends (the search
     * for the next keyword goes on from there, so each character is looked at a bounded number of
     * times whatever the text holds), or -1 if there was none.
     */
    private static int maskLiteralFrom(String t, char[] cs, int from) {
        for (int i = from, limit = Math.min(t.length(), from + REACH); i < limit; i++) {
            char c = t.charAt(i);
            if (c == ',' || c == ';' || c == ')') return -1;
            // a literal starts a value: after a space, '=' or '('. A quote right after other text
            // closes something else (MariaDB's own "IDENTIFIED BY *****" ends its quoted field so)
            char before = i > 0 ? t.charAt(i - 1) : ' ';
            if (!(Character.isWhitespace(before) || before == '=' || before == '(')) continue;
            for (String[] q : QUOTES) {
                if (t.startsWith(q[0], i)) {
                    int open = i + q[0].length();
                    int close = closing(t, open, q[1]);
                    if (close == open) return -1; // an empty literal: nothing to hide
                    for (int j = open; j < close; j++) cs[j] = '*';
                    return close;
                }
            }
        }
        return -1;
    }

    private static boolean opens(String t, int i) {
        for (String[] q : QUOTES) {
            if (t.startsWith(q[0], i)) return true;
        }
        return false;
    }

    /**
     * Where the literal opened before {@code from} closes with {@code quote}, or the text's end.
     */
    private static int closing(String t, int from, String quote) {
        boolean single = quote.length() == 1;
        for (int i = from; i < t.length(); i++) {
            if (single && t.charAt(i) == '\\') {
                i++; // escapes the next character
                continue;
            }
            if (t.startsWith(quote, i)) {
                if (single && t.startsWith(quote, i + 1)) {
                    i++; // a doubled quote is one
                    continue;
                }
                return i;
            }
        }
        return t.length();
    }

    private static int skipSpaces(String t, int i) {
        while (i < t.length() && Character.isWhitespace(t.charAt(i))) i++;
        return i;
    }

    private static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }
}
