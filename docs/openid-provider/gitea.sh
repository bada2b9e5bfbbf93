# Gitea signing people in with Gatehouse (docs/openid-provider/gitea.md): run once on the Gitea host, as
# the user Gitea runs as. Placeholders, each a whole word:
#   ISSUER         Gatehouse's publicUrl (the portal's origin), e.g. https://gatehouse.example.com
#   CLIENT_ID      the app's client id in Gatehouse
#   CLIENT_SECRET  one of the app's client secrets

gitea admin auth add-oauth \
  --name gatehouse \
  --provider openidConnect \
  --key CLIENT_ID \
  --secret CLIENT_SECRET \
  --auto-discover-url ISSUER/.well-known/openid-configuration \
  --scopes "openid profile email groups" \
  --group-claim-name groups \
  --admin-group admins \
  --skip-local-2fa
