# The TLS receiver's check of each sender's certificate (run sets it as the transport's cert_verifier
# when AUDITPIPE_LISTEN_TLS_PEERS is set): OpenSSL's verification against AUDITPIPE_LISTEN_TLS_CA must
# pass, and the sender's own certificate must name one of the permitted peers, comma-separated, in a
# DNS subjectAltName or, without one, in its common name, a permitted "*.example.net" matching one label
# (as rsyslog's x509/name permittedPeer does).
# A sender that fails is refused at the handshake: nothing it sends is read.
permitted = ENV.fetch("AUDITPIPE_LISTEN_TLS_PEERS", "").split(",").map(&:strip).reject(&:empty?)
lambda do |preverify_ok, store|
  next false unless preverify_ok
  next true unless store.error_depth.zero?  # the CA's certificates: OpenSSL has verified them
  cert = store.current_cert
  san = cert.extensions.find { |e| e.oid == "subjectAltName" }
  names = san ? san.value.split(",").map(&:strip).select { |v| v.start_with?("DNS:") }.map { |v| v.delete_prefix("DNS:") } : []
  names = cert.subject.to_a.select { |entry| entry[0] == "CN" }.map { |entry| entry[1] } if names.empty?
  names.any? do |name|
    permitted.any? do |peer|
      if peer.start_with?("*.")
        head, rest = name.split(".", 2)
        !head.to_s.empty? && rest.to_s.casecmp?(peer[2..])
      else
        name.casecmp?(peer)
      end
    end
  end
end
