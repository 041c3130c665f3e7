package io.auditpipe.parser;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The account string MySQL writes into query events: {@code user[priv_user] @ host [ip]} (for
 * example {@code root[root] @ localhost [127.0.0.1]}). Connect events carry the plain user.
 *
 * <p>What the parts are is defined by {@link #ACCOUNT}'s reluctant groups. Most strings are read by
 * index instead (the first {@code [}, the first {@code "] @ "} after it, the first {@code " ["}
 * after that: exactly the groups the expression finds first, when they fit); the rest, and any
 * string with a line break (which {@code .} does not match), go to the expression. MysqlAccountTest
 * compares the two on generated strings.
 */
public record MysqlAccount(String user, String privUser, String host, String ip) {
    static final Pattern ACCOUNT = Pattern.compile("^(.*?)\\[(.*?)\\] @ (.*?) \\[(.*?)\\]$");

    /** The parts of {@code user[priv] @ host [ip]}, or null if the text is not in that form. */
    public static MysqlAccount parse(String text) {
        if (text == null || text.indexOf('@') < 0) {
            return null;
        }
        MysqlAccount read = byIndex(text);
        return read != null ? read : byExpression(text);
    }

    /** The expression's first match found by index, or null when it is not the simple case. */
    static MysqlAccount byIndex(String text) {
        int n = text.length();
        if (n == 0 || text.charAt(n - 1) != ']') return null;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029')
                return null;
        }
        int open = text.indexOf('[');
        if (open < 0) return null;
        int at = text.indexOf("] @ ", open + 1);
        if (at < 0) return null;
        int ipOpen = text.indexOf(" [", at + 4);
        if (ipOpen < 0 || ipOpen + 2 > n - 1) return null;
        return new MysqlAccount(
                text.substring(0, open),
                text.substring(open + 1, at),
                text.substring(at + 4, ipOpen).trim(),
                text.substring(ipOpen + 2, n - 1));
    }

    static MysqlAccount byExpression(String text) {
        Matcher m = ACCOUNT.matcher(text);
        if (!m.matches()) {
            return null;
        }
        return new MysqlAccount(m.group(1), m.group(2), m.group(3).trim(), m.group(4));
    }

    @Override
    public String toString() {
        return user + "|" + privUser + "|" + host + "|" + ip;
    }
}
