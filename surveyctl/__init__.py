"""surveyctl: survey-as-code for buyers on a respondent marketplace.

YAML manifests describe surveys and exclusion groups; `surveyctl plan` shows what a change
would do to the live surveys and `surveyctl apply` makes it so. `surveyctl.sandbox` is a local
implementation of the marketplace API, the default target when nothing is configured.
"""

__version__ = "0.1.0"
