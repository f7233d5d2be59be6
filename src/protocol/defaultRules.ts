// The sensitive-page rules that ship with tabward, grouped by category. They cover the 14 rules of the
// source article; `*://*.bank.*/*` is kept as written (a `.*` host suffix means "any labels after") and
// backed by a list of real bank domains, since banks rarely put "bank" in a label of their own. In protocol:
// the extension ships them too and judges site calls with them.

export interface RuleSeed {
  readonly pattern: string;
  readonly category: string;
}

const categories: Record<string, readonly string[]> = {
  'banking and payments': [
    '*://*.bank.*/*',
    '*://*.bank/*',
    '*://*.alipay.com/*',
    '*://*.paypal.com/*',
    '*://paypal.com/*',
    '*://*.stripe.com/*',
    '*://*.wise.com/*',
    '*://*.chase.com/*',
    '*://*.bankofamerica.com/*',
    '*://*.wellsfargo.com/*',
    '*://*.citi.com/*',
    '*://*.hsbc.com/*',
    '*://*.barclays.co.uk/*',
    '*://*.icbc.com.cn/*',
    '*://*.ccb.com/*',
    '*://*.boc.cn/*',
    '*://*.abchina.com/*',
    '*://*.cmbchina.com/*',
    '*://*.revolut.com/*',
    '*://pay.weixin.qq.com/*',
  ],
  'webmail (one-time codes arrive here)': [
    '*://mail.google.com/*',
    '*://outlook.live.com/*',
    '*://outlook.office.com/*',
    '*://mail.yahoo.com/*',
    '*://mail.proton.me/*',
    '*://mail.qq.com/*',
    '*://mail.163.com/*',
  ],
  'identity and account settings': [
    '*://myaccount.google.com/*',
    '*://accounts.google.com/*',
    '*://account.microsoft.com/*',
    '*://login.microsoftonline.com/*',
    '*://appleid.apple.com/*',
    '*://account.apple.com/*',
    '*://*.okta.com/*',
    '*://*.auth0.com/*',
  ],
  'password managers': [
    '*://*.1password.com/*',
    '*://vault.bitwarden.com/*',
    '*://*.lastpass.com/*',
    '*://*.dashlane.com/*',
  ],
  'cloud consoles': [
    '*://*.console.cloud.google.com/*',
    '*://*.console.aws.amazon.com/*',
    '*://*.portal.azure.com/*',
    '*://dash.cloudflare.com/*',
    '*://cloud.digitalocean.com/*',
    '*://*.console.aliyun.com/*',
  ],
  'code host settings': [
    '*://github.com/settings/*',
    '*://*.github.com/settings/*',
    '*://github.com/*/settings/*',
    '*://*.github.com/*/settings/*',
    '*://gitlab.com/-/profile/*',
    '*://gitlab.com/-/user_settings/*',
    '*://gitlab.com/*/-/settings/*',
    '*://gitlab.com/admin/*',
    '*://*.gitlab.com/-/profile/*',
    '*://*.gitlab.com/-/user_settings/*',
    '*://*.gitlab.com/*/-/settings/*',
    '*://*.gitlab.com/admin/*',
    '*://bitbucket.org/account/*',
    '*://*.npmjs.com/settings/*',
  ],
  'admin consoles': [
    '*://*.feishu.cn/admin/*',
    '*://*.larksuite.com/admin/*',
    '*://admin.google.com/*',
    '*://admin.microsoft.com/*',
    '*://*.slack.com/admin/*',
  ],
};

export const defaultRuleSeeds: readonly RuleSeed[] = Object.entries(categories).flatMap(
  ([category, patterns]) => patterns.map((pattern) => ({ pattern, category })),
);
