# Nextcloud signing people in with Gatehouse through its "OpenID Connect user backend" app (user_oidc)
# (docs/openid-provider/nextcloud.md): run once in the Nextcloud folder, as the web server's user.
# Placeholders, each a whole word:
#   ISSUER         Gatehouse's publicUrl (the portal's origin), e.g. https://gatehouse.example.com
#   CLIENT_ID      the app's client id in Gatehouse
#   CLIENT_SECRET  one of the app's client secrets

sudo -u www-data php occ app:enable user_oidc
sudo -u www-data php occ user_oidc:provider Gatehouse \
  --clientid="CLIENT_ID" \
  --clientsecret="CLIENT_SECRET" \
  --discoveryuri="ISSUER/.well-known/openid-configuration" \
  --scope="openid profile email groups" \
  --mapping-uid="sub" \
  --mapping-display-name="name" \
  --mapping-email="email" \
  --mapping-groups="groups" \
  --group-provisioning=1 \
  --check-bearer=0
