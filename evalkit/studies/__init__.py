"""Study notebooks run under the pre-registration lock by papermill, rendered offline."""
